import ImprintEncoding
import ArgumentParser
import Crypto
import EditingTraces
import Foundation
import ImprintBundle
import ImprintCRDT
import ImprintStore

/// `imprint-bench bundle`: a trace's history spread over several device logs, a snapshot and
/// conflict copies (Syncthing, iCloud) in one bundle; measures opening it (load every file,
/// merge, read the text) and syncing it (snapshot, compaction, tidying).
struct BundleBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Open and merge a bundle whose trace history is spread over device logs, a snapshot and conflict copies.")

    @Argument(help: "A sequential trace file (.json or .json.gz).") var path: String
    @Option(help: "Devices writing the history.") var devices = 4
    @Option(help: "Trace transactions per change (each change goes to the next device's log).") var transactionsPerChange = 100
    @Option(help: "Runs; medians are reported.") var runs = 5
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let trace = try EditingTrace.load(path: path)
        guard !trace.isConcurrent else { throw ValidationError("bundle: a sequential trace is needed") }
        guard devices >= 2, transactionsPerChange >= 1 else { throw ValidationError("--devices >= 2 and --transactions-per-change >= 1") }
        let directory = NSTemporaryDirectory() + "imprint-bench-bundle-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bundlePath = directory + "/paper.imprint"
        let (buildMs, layout) = try Clock.measure { try buildBundle(trace, at: bundlePath, scratch: directory + "/scratch") }
        let bundleBytes = regularFileBytes(under: bundlePath)
        if !json { print("built \(layout.changes) changes over \(devices) devices in \(Clock.format(buildMs)) ms, \(bundleBytes) bytes") }

        let reader = try DeviceID("reader")
        var openTimes: [Double] = []
        var text = ""
        for _ in 0..<max(1, runs) {
            let (ms, result) = try Clock.measure { () -> String in
                try DocumentBundle.open(at: bundlePath, device: reader).text()
            }
            openTimes.append(ms)
            text = result
        }
        guard text == trace.endContent else { throw ValidationError("the merged bundle's text differs from the trace's end content") }
        let (syncMs, report) = try Clock.measure { try DocumentBundle.open(at: bundlePath, device: reader).sync() }
        guard report.kept.isEmpty else { throw ValidationError("sync kept conflict copies: \(report.kept)") }
        var reopenTimes: [Double] = []
        for _ in 0..<max(1, runs) {
            let (ms, result) = try Clock.measure { try DocumentBundle.open(at: bundlePath, device: reader).text() }
            reopenTimes.append(ms)
            guard result == trace.endContent else { throw ValidationError("text changed after sync") }
        }
        let sha = Hex.encode(SHA256.hash(data: Array(text.utf8)))
        let fields: [(String, String)] = [
            ("trace", "\"\(trace.name)\""),
            ("devices", "\(devices)"),
            ("changes", "\(layout.changes)"),
            ("conflict_copies", "\(layout.conflictCopies)"),
            ("bundle_bytes", "\(bundleBytes)"),
            ("open_ms", Clock.format(Clock.median(openTimes))),
            ("sync_ms", Clock.format(syncMs)),
            ("open_after_sync_ms", Clock.format(Clock.median(reopenTimes))),
            ("peak_rss_mb", Clock.format(Clock.peakRSSMegabytes())),
            ("final_sha256", "\"\(sha)\""),
        ]
        if json {
            print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
        } else {
            for (key, value) in fields { print("\(key): \(value)") }
        }
    }

    struct Layout {
        var changes: Int
        var conflictCopies: Int
    }

    /// Replays the trace with one actor per device (rotating every `transactionsPerChange`
    /// transactions), then writes: every device's changes to its log; a snapshot of device 0
    /// covering the first half (its log compacted); the last third of device 1's changes only
    /// in an iCloud copy `device-1 2.log`, and of the last device's only in a Syncthing copy.
    func buildBundle(_ trace: EditingTrace, at path: String, scratch: String) throws -> Layout {
        var generator = SystemRandomNumberGenerator()
        let ids = try (0..<devices).map { try DeviceID("device-\($0)") }
        let actors = ids.map { SessionActor.make(for: $0, using: &generator) }
        let doc = Document(actor: actors[0])
        doc.coalescesLocalChanges = false
        let body = try doc.change(message: "create") { tx -> ObjectID in
            try tx.put(.root, DocumentSchema.schemaKey, .scalar(.int(DocumentSchema.version)))
            try tx.put(.root, DocumentSchema.titleKey, "bench")
            return try tx.put(.root, DocumentSchema.bodyKey, .text)!
        }
        var chunk = 0
        var reader = trace.transactionReader()
        while reader.hasNext {
            doc.setActor(actors[chunk % devices])
            chunk += 1
            try doc.change { tx in
                for _ in 0..<transactionsPerChange where reader.hasNext {
                    try reader.readTransaction { pos, del, ins in try tx.splice(body, at: pos, delete: del, insert: ins) }
                }
            }
        }
        let changes = doc.allChanges()
        func record(_ c: Change) throws -> ImprintBundle.LogRecord {
            ImprintBundle.LogRecord(hash: try ImprintBundle.RecordHash(bytes: c.hash.bytes), bytes: c.bytes)
        }
        var perDevice = [[Change]](repeating: [], count: devices)
        for c in changes { perDevice[actors.firstIndex(of: c.actor)!].append(c) }

        let metadata = BundleMetadata(documentID: "bench", title: "bench", created: Date())
        _ = try BundleStore.create(at: path, device: ids[0], metadata: metadata)
        var conflictCopies = 0
        for (d, list) in perDevice.enumerated() {
            let store = try BundleStore.open(at: path, device: ids[d])
            let moved = (d == 1 || d == devices - 1) ? list.count / 3 : 0
            try store.append(list.dropLast(moved).map(record))
            guard moved > 0 else { continue }
            let scratchStore = try BundleStore.create(at: scratch + "-\(d).imprint", device: ids[d], metadata: metadata)
            try scratchStore.append(list.suffix(moved).map(record))
            let name = d == 1 ? "device-\(d) 2.log" : "device-\(d).sync-conflict-20261121-063000-ABCDEFG.log"
            try FileManager.default.copyItem(atPath: scratchStore.layout.changeLogPath(for: ids[d]),
                                             toPath: store.layout.changesPath + "/" + name)
            try FileManager.default.removeItem(atPath: scratchStore.layout.root)
            conflictCopies += 1
        }
        let half = Document(actor: actors[0])
        try half.apply(Array(changes.prefix(changes.count / 2)))
        let snapshot = SnapshotFile(coveredChanges: try half.allChanges().map { try ImprintBundle.RecordHash(bytes: $0.hash.bytes) },
                                    snapshot: half.save())
        try BundleStore.open(at: path, device: ids[0]).writeSnapshot(snapshot)
        return Layout(changes: changes.count, conflictCopies: conflictCopies)
    }

    func regularFileBytes(under root: String) -> Int {
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return 0 }
        var total = 0
        while let relative = enumerator.nextObject() as? String {
            if let attributes = try? FileManager.default.attributesOfItem(atPath: root + "/" + relative),
               attributes[.type] as? FileAttributeType == .typeRegular {
                total += (attributes[.size] as? Int) ?? 0
            }
        }
        return total
    }
}
