import ArgumentParser
import Foundation
import ImprintStore
import ImprintDelivery
import ImprintSync
import ImprintZones

extension SyncBenchmark {
    /// `compaction`: two documents on one server, three members each, the same `--changes`
    /// change sets pushed by one member (a word appended each time) while the other two pull
    /// every 100. In the first, the writer compacts every `--snapshot-every` change sets (a
    /// snapshot marked as a checkpoint, then the zone drops what all three have passed); the
    /// second gets no snapshot after the invite's, so nothing can go. At the end: each zone's
    /// bytes (`getUsage`), the full-history save of the document, and what the compacted zone
    /// must hold at least: the newest snapshot plus every message after the oldest member's
    /// cursor. Goal: compacted zone ≤ 1.5 × that.
    func compaction(directory: String, serverURL: String, serverData: String) async throws -> [(String, String)] {
        var people: [BenchMember] = []
        for name in ["alice", "bob", "carol"] {
            people.append(try await BenchMember.make(name, directory: directory, serverURL: serverURL))
        }
        func run(compacting: Bool, suffix: String) async throws -> (doc: SharedDocument, readers: [SharedDocument], seconds: Double, report: CompactionReport?) {
            let paths = people.map { $0.bundlePath.replacingOccurrences(of: ".imprint", with: "-\(suffix).imprint") }
            _ = try DocumentBundle.create(at: paths[0], device: people[0].device, title: "compaction")
            let writer = try await SharedDocument.share(bundleAt: paths[0], device: people[0].device, account: people[0].account)
            try await writer.invite(people.dropFirst().map(\.account.did))
            var readers: [SharedDocument] = []
            for (person, path) in zip(people.dropFirst(), paths.dropFirst()) {
                readers.append(try await SharedDocument.join(convoId: writer.convoId, account: person.account, bundleAt: path, device: person.device))
            }
            let start = ContinuousClock.now
            var length = 0
            var last: CompactionReport?
            for index in 0..<changes {
                let word = "w\(index) "
                let at = length
                try await writer.edit { bundle in try bundle.insert(word, at: at) }
                try await writer.push()
                length += word.count
                if (index + 1) % 100 == 0 { for reader in readers { try await reader.pull() } }
                if compacting && (index + 1) % snapshotEvery == 0 { last = try await writer.compact() }
                if !json && (index + 1) % 1000 == 0 {
                    FileHandle.standardError.write(Data("compaction (\(suffix)): \(index + 1) change sets\n".utf8))
                }
            }
            for reader in readers { try await reader.pull() }
            if compacting {
                // A last snapshot; once everyone has read it, the zone is compacted the way the
                // server's own compactor does (no new snapshot): the steady state.
                last = try await writer.compact()
                for reader in readers { try await reader.pull() }
                try await writer.pull()
                _ = try await people[0].account.zones.compact(zoneId: "doc_" + writer.convoId)
            }
            let seconds = Double((ContinuousClock.now - start).components.seconds)
            let text = try await writer.text()
            for reader in readers where try await reader.text() != text {
                throw ValidationError("compaction: a member's text differs at the end")
            }
            return (writer, readers, seconds, last)
        }
        let compacted = try await run(compacting: true, suffix: "compacted")
        let kept = try await run(compacting: false, suffix: "kept")
        guard let http = people[0].account.zones as? HTTPZoneStore else { throw ValidationError("compaction: not an HTTP zone store") }
        let usage = try await http.usage()
        func bytes(_ doc: SharedDocument) -> Int64 { usage.zones.first { $0.zoneId == "doc_" + doc.convoId }?.bytes ?? -1 }
        func records(_ doc: SharedDocument) -> Int { usage.zones.first { $0.zoneId == "doc_" + doc.convoId }?.records ?? -1 }

        // What the compacted zone must hold at least.
        guard let report = compacted.report else { throw ValidationError("compaction: no compaction ran") }
        let cursors = try await people[0].account.delivery.getCursors(convoId: compacted.doc.convoId)
        let oldest = cursors.cursors.map(\.processedSeq).min() ?? 0
        var needed = 0
        var snapshotBytes = 0
        var since = max(0, cursors.firstKeptSeq - 1)
        while true {
            let page = try await people[0].account.delivery.getMessages(convoId: compacted.doc.convoId, sinceSeq: since, limit: 1000)
            for message in page.messages {
                if message.seq == report.snapshotSeq { snapshotBytes = message.size }
                if message.seq == report.snapshotSeq || (message.seq > oldest && message.messageType == .app) { needed += message.size }
            }
            guard let next = page.cursor, !page.messages.isEmpty else { break }
            since = next
        }
        let fullSave = try DocumentBundle.open(at: compacted.doc.bundlePath, device: people[0].device).document.save().count
        return [
            ("change_sets", "\(changes)"), ("snapshot_every", "\(snapshotEvery)"), ("members", "3"),
            ("compacted_zone_bytes", "\(bytes(compacted.doc))"), ("compacted_zone_records", "\(records(compacted.doc))"),
            ("uncompacted_zone_bytes", "\(bytes(kept.doc))"), ("uncompacted_zone_records", "\(records(kept.doc))"),
            ("full_history_save_bytes", "\(fullSave)"), ("last_snapshot_ciphertext_bytes", "\(snapshotBytes)"),
            ("needed_bytes", "\(needed)"),
            ("ratio_to_needed", Clock.format(Double(bytes(compacted.doc)) / Double(max(1, needed)))),
            ("compacted_run_s", "\(compacted.seconds)"), ("uncompacted_run_s", "\(kept.seconds)"),
            ("server_data_bytes", "\(DirectorySize.bytes(under: serverData))"),
        ]
    }
}
