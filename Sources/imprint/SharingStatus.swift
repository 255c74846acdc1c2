import ArgumentParser
import Foundation
import ImprintSync

/// `imprint status <bundle> [--json]`: sync diagnostics.
struct SharingStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Sync diagnostics: epoch, last processed seq, buffered records, gaps and their age, unpushed changes.")

    @OptionGroup var options: SharedBundleOptions

    func run() throws {
        let status = try options.withDocument(writes: false) { doc, _ in await doc.status() }
        if options.json {
            let data = try JSONEncoder.sortedKeys.encode(status)
            print(String(decoding: data, as: UTF8.self))
            return
        }
        print("convo \(status.convoId) on \(status.server) as \(status.did)")
        print("epoch \(status.epoch), processed seq \(status.processedSeq) of \(status.latestSeq.map(String.init) ?? "?")")
        print("unpushed changes \(status.unpushedChanges), outbox \(status.outbox), waiting changes \(status.waitingChanges)")
        if status.readsInbox || status.mailboxThreshold != nil || status.inboxCopiesPending > 0 {
            let threshold = status.mailboxThreshold.map { "threshold \($0) members" } ?? "no threshold"
            print("mailbox: \(status.readsInbox ? "reads its inbox" : "reads the shared zone") (\(threshold)), inbox copies pending \(status.inboxCopiesPending)")
        }
        if !status.bufferedSeqs.isEmpty { print("buffered seqs \(status.bufferedSeqs.map(String.init).joined(separator: ", "))") }
        for gap in status.gaps { print("gap: seq \(gap.seq) (epoch \(gap.epoch), from \(gap.sender)) missing for \(gap.ageSeconds) s") }
        for alert in status.alerts { print("alert: \(alert)") }
        if let ended = status.ended { print("ended: \(ended)") }
    }
}

extension JSONEncoder {
    /// Compact, sorted keys, ISO 8601 dates: the CLI's one-object JSON output.
    static var sortedKeys: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}
