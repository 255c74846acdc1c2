import Foundation
import ImprintBundle
import ImprintCRDT
import Testing
@testable import ImprintStore
import ImprintTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Whole bundles on disk, damaged one file at a time: seeded bit flips, truncations and
/// file-type swaps in every file of a three-device bundle with snapshots and assets, then a
/// read and an edit from every device. Whatever happens, no change that an intact frame or a
/// readable snapshot held before is missing from the bundle's live files after, every failure
/// is a typed error, and the CLI's exit status follows the contract (0, or 2 for damage).
///
/// `IMPRINT_TEST_SEED` replays a run; `IMPRINT_BUNDLE_FUZZ_CASES` (default 100) widens it.
@Suite struct BundleDamageFuzzTests {
    enum Damage: CaseIterable { case flip, truncate, directory, fifo }

    static let devices = ["alpha", "beta", "gamma"].map { try! DeviceID($0) }

    /// A bundle three devices wrote: alpha compacted into a snapshot and wrote on, beta added an
    /// asset, gamma's log is long and uncompacted.
    static func makeBase(at path: String) throws {
        let alpha = try DocumentBundle.create(at: path, device: devices[0], title: "Fuzzed")
        for i in 0..<6 { try alpha.insert("a\(i) ", at: try alpha.text().unicodeScalars.count) }
        try alpha.sync(compact: true, settle: .immediate)
        for i in 6..<9 { try alpha.insert("a\(i) ", at: 0) }
        let beta = try DocumentBundle.open(at: path, device: devices[1])
        for i in 0..<5 { try beta.insert("b\(i) ", at: 0) }
        let picture = path + "/../picture.bin"
        try Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: picture))
        _ = try beta.addAsset(contentsOf: picture, name: "picture.bin")
        let gamma = try DocumentBundle.open(at: path, device: devices[2])
        for i in 0..<20 { try gamma.insert("g\(i) ", at: try gamma.text().unicodeScalars.count / 2) }
    }

    /// Every change hash the bundle's live files hold readably: intact frames of every log and
    /// conflict copy (quarantined files excluded) and the coverage of every snapshot that reads.
    static func readableHashes(_ path: String) -> Set<ImprintBundle.RecordHash> {
        var hashes = Set<ImprintBundle.RecordHash>()
        guard let inventory = try? BundleLayout(root: path).inventory() else { return hashes }
        for log in inventory.changeLogs {
            if let contents = try? ChangeLogReader.read(at: log.path) { hashes.formUnion(contents.records.map(\.hash)) }
        }
        for snapshot in inventory.snapshots {
            if let file = try? SnapshotFile.read(at: snapshot.path) { hashes.formUnion(file.coveredChanges) }
        }
        return hashes
    }

    static func dataFiles(_ path: String) -> [String] {
        regularFiles(under: path).filter { !$0.hasPrefix("locks/") }.map { path + "/" + $0 }
    }

    static func damage(_ file: String, _ kind: Damage, rng: inout SplitMix64) throws -> String {
        var bytes = [UInt8](FileManager.default.contents(atPath: file) ?? Data())
        switch kind {
        case .flip where !bytes.isEmpty:
            let at = Int.random(in: 0..<bytes.count, using: &rng)
            bytes[at] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            return "flip byte \(at)"
        case .truncate, .flip:
            let keep = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
            try Data(bytes.prefix(keep)).write(to: URL(fileURLWithPath: file))
            return "truncate to \(keep) of \(bytes.count)"
        case .directory:
            try FileManager.default.removeItem(atPath: file)
            try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)
            return "directory"
        case .fifo:
            try FileManager.default.removeItem(atPath: file)
            guard mkfifo(file, 0o644) == 0 else { throw CocoaError(.fileWriteUnknown) }
            return "fifo"
        }
    }

    /// Opens as `device`, reads, edits unless known incomplete, syncs; what happened.
    static func readAndEdit(_ path: String, as device: DeviceID) -> String {
        let doc: DocumentBundle
        do {
            doc = try DocumentBundle.open(at: path, device: device)
        } catch {
            return describe(error)
        }
        do {
            _ = try doc.text()
            let incomplete = doc.incompleteness != nil
            if !incomplete { try doc.insert("\(device.rawValue)! ", at: 0) }
            try doc.sync(settle: .immediate)
            return incomplete ? "incomplete, synced" : "edited, synced"
        } catch {
            return describe(error)
        }
    }

    static func describe(_ error: any Error) -> String {
        guard let store = error as? StoreError else { return "untyped error: \(error)" }
        return store.isHostileOrCorrupt ? "refused as damage" : "refused: " + String(String(describing: store).prefix(60))
    }

    static var cases: Int {
        ProcessInfo.processInfo.environment["IMPRINT_BUNDLE_FUZZ_CASES"].flatMap(Int.init) ?? 100
    }

    @Test func noIntactChangeIsEverLostToDamageElsewhere() async throws {
        let seed = testSeed("BundleDamageFuzzTests", fallback: 0xDA_4A6E)
        var rng = SplitMix64(seed: seed)
        let temp = TemporaryDirectory("bundle-fuzz")
        let base = temp.file("base/paper.imprint")
        try FileManager.default.createDirectory(atPath: temp.file("base"), withIntermediateDirectories: true)
        try Self.makeBase(at: base)
        let files = Self.dataFiles(base).map { String($0.dropFirst(base.count + 1)) }
        var outcomes: [String: Int] = [:]
        for n in 0..<Self.cases {
            let path = temp.file("case\(n)/paper.imprint")
            try FileManager.default.createDirectory(atPath: temp.file("case\(n)"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: base, toPath: path)
            let target = files.randomElement(using: &rng)!
            let kind = Damage.allCases.randomElement(using: &rng)!
            let what = try Self.damage(path + "/" + target, kind, rng: &rng)
            let context = "case \(n) (\(target): \(what)), seed \(seed)"
            let before = Self.readableHashes(path)

            for device in Self.devices {
                let outcome = Self.readAndEdit(path, as: device)
                outcomes[outcome, default: 0] += 1
            }
            let after = Self.readableHashes(path)
            let lost = before.subtracting(after)
            #expect(lost.isEmpty, "\(lost.count) readable changes lost: \(context)")
            if n % 15 == 0 {
                // The CLI on the same damage: a clean exit or exit 2, one error line.
                let run = try await CLITests.imprint(["text", path], device: "delta", in: temp.path)
                #expect(run.status == 0 || run.status == 2, "\(run.status) \(run.stderr): \(context)")
                if run.status != 0 {
                    // Warnings may come first; the failure itself is one last `error:` line.
                    let lines = run.stderr.split(separator: "\n")
                    #expect(lines.last?.hasPrefix("error: ") == true && lines.filter { $0.hasPrefix("error: ") }.count == 1, "\(run.stderr): \(context)")
                }
            }
        }
        print("BundleDamageFuzzTests: \(Self.cases) cases, seed \(seed): \(outcomes.sorted { $0.key < $1.key })")
    }
}
