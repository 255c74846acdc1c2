import ArgumentParser
import Foundation
import ImprintSync

/// `imprint live <bundle>`: stays connected; one line per event; reconnects by itself.
struct Live: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stay connected: push local edits as they land, merge remote ones as they arrive (one line per event).")

    @OptionGroup var options: SharedBundleOptions
    @Option(name: .customLong("renew-away-days"),
            help: "As an admin, renew members who have left messages unread for this many days (removed and added again with a fresh Welcome).")
    var renewAwayDays: Int?

    func validate() throws {
        if let renewAwayDays, renewAwayDays < 1 { throw ValidationError("--renew-away-days must be at least 1") }
    }

    func run() throws {
        let json = options.json
        let window = renewAwayDays.map { Duration.seconds($0 * 24 * 3600) }
        try options.withDocument(adjusting: { $0.renewMembersAwayFor = window }) { doc, sync in
            print(json ? #"{"event":"connected","convoId":"\#(doc.convoId)"}"# : "live on \(doc.convoId) as \(sync.did)")
            flushOutput()
            for try await event in doc.live() {
                print(Self.line(event, json: json))
                flushOutput()
            }
        }
    }

    static func line(_ event: LiveEvent, json: Bool) -> String {
        switch event {
        case let .pushed(report):
            return json ? JSON.object(["event": .string("pushed"), "changes": .int(report.changes), "seq": .int(report.seq ?? 0),
                                       "assets": .int(report.assets)]).serialized
                : "pushed \(report.changes) change\(report.changes == 1 ? "" : "s") as seq \(report.seq ?? 0)" + (report.assets > 0 ? " and \(report.assets) asset\(report.assets == 1 ? "" : "s")" : "")
        case let .pulled(report):
            var fields: [String: JSON] = ["event": .string("pulled"), "messages": .int(report.messages), "changes": .int(report.changes),
                                          "commits": .int(report.commits), "epoch": .int(report.epoch), "seq": .int(report.seq)]
            if !report.renewed.isEmpty { fields["renewed"] = .array(report.renewed.map(JSON.string)) }
            let renewed = report.renewed.isEmpty ? "" : "; renewed \(report.renewed.joined(separator: ", "))"
            return json ? JSON.object(fields).serialized
                : "merged \(report.messages) message\(report.messages == 1 ? "" : "s") (\(report.changes) changes, \(report.commits) commits); epoch \(report.epoch), seq \(report.seq)\(renewed)"
        case let .reconnecting(reason, delay):
            return json ? JSON.object(["event": .string("reconnecting"), "reason": .string(reason)]).serialized
                : "reconnecting in \(delay): \(reason)"
        case let .retrying(reason):
            return json ? JSON.object(["event": .string("retrying"), "reason": .string(reason)]).serialized : "will retry: \(reason)"
        case let .presence(update, index):
            return json ? JSON.object(["event": .string("presence"), "did": .string(update.did), "active": .bool(update.isActive),
                                       "index": index.map { JSON.int($0) } ?? .null]).serialized
                : update.isActive ? "\(update.did) is editing\(index.map { " at \($0)" } ?? "")" : "\(update.did) stopped editing"
        }
    }
}

/// Flushes stdout so each event line reaches a pipe at once.
private func flushOutput() {
    fflush(nil)
}
