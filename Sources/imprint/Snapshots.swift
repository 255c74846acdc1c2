import ArgumentParser
import Foundation
import ImprintDelivery
import ImprintSnapshot
import ImprintSync

/// `imprint snapshots list|revoke`: the reviewer snapshots this home exported, and revoking
/// a link (docs/reviewer-snapshots.md).
struct Snapshots: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List this home's reviewer snapshots; revoke a review link.",
        subcommands: [List.self, Revoke.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every reviewer snapshot this home exported, newest first.")

        @Argument(help: "Only the snapshots of this bundle.") var bundle: String?
        @Flag(help: "Print a JSON array.") var json = false
        @OptionGroup var account: AccountOptions

        func run() throws {
            var entries = ReviewSnapshotRegistry(homePath: account.resolvedHome.path).entries()
            if let bundle {
                let path = URL(fileURLWithPath: bundle).standardizedFileURL.path
                entries = entries.filter { $0.bundle == path }
            }
            let now = Date()
            if json {
                print(JSON.array(entries.map { e in
                    var fields: [String: JSON] = [
                        "snapshotId": .string(e.snapshotId), "documentId": .string(e.documentId), "title": .string(e.title),
                        "bundle": .string(e.bundle), "form": .string(e.form), "exportedAt": .string(e.exportedAt),
                        "state": .string(state(e, now: now)),
                    ]
                    if let expires = e.expires { fields["expires"] = .string(expires) }
                    if let output = e.output { fields["output"] = .string(output) }
                    if let server = e.server { fields["server"] = .string(server) }
                    return .object(fields)
                }).serialized)
                return
            }
            if entries.isEmpty { print("no snapshots"); return }
            for e in entries {
                print("\(e.snapshotId)  \(e.form)  \(state(e, now: now))  \(e.exportedAt)  \(e.title.isEmpty ? "Untitled" : e.title)" +
                      (e.expires.map { "  expires \($0)" } ?? "") + (e.server.map { "  on \($0)" } ?? ""))
            }
        }

        /// `active`, `expired` or `revoked`.
        func state(_ e: ReviewSnapshotRegistry.Entry, now: Date) -> String {
            if e.revoked == true { return "revoked" }
            if let expires = e.expires, let date = RFC3339.date(from: expires), date <= now { return "expired" }
            return "active"
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a review link's snapshot record: the link and its file answer 'revoked' from now on.")

        @Argument(help: "The snapshot id (from `imprint snapshots list`).") var snapshotId: String
        @OptionGroup var account: AccountOptions

        func run() throws {
            let registry = ReviewSnapshotRegistry(homePath: account.resolvedHome.path)
            guard var entry = try registry.entry(snapshotId) else {
                throw CommandFailure.user("this home exported no snapshot \(snapshotId) (see imprint snapshots list)")
            }
            guard entry.form == "link", let server = entry.server, let zoneId = entry.zoneId, let recordName = entry.recordName else {
                throw CommandFailure.user("snapshot \(snapshotId) is a password-form file: it holds its own ciphertext and cannot be revoked; whoever has the file and the password can read it")
            }
            let sync = try account.account(fallback: server)
            let deleted = try runBlocking { try await ReviewLink.revoke(zoneId: zoneId, recordName: recordName, zones: sync.zones) }
            let already = entry.revoked == true
            entry.revoked = true
            try registry.save(entry)
            print(deleted || !already ? "revoked snapshot \(snapshotId): its link now answers 'revoked'; comments already posted can still be imported"
                                      : "snapshot \(snapshotId) was already revoked")
        }
    }
}
