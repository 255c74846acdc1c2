import ArgumentParser
import Crypto
import Foundation
import ImprintDelivery
import ImprintSnapshot
import ImprintStore
import ImprintSync

/// `imprint comments import|list`: reviewers' comments into the document, and the document's
/// comments with the words they cover now.
struct Comments: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import reviewers' comments; list a document's comments.",
        subcommands: [Import.self, List.self])

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify, decrypt and merge reviewers' comments as anchored comments.")

        @Argument(help: "The bundle.") var bundle: String
        @Argument(help: ".imprint-comments files from reviewers.") var files: [String] = []
        @Flag(name: .customLong("from-server"), help: "Fetch the comments posted through this document's review links.")
        var fromServer = false
        @Flag(help: "Print one JSON object.") var json = false
        @OptionGroup var account: AccountOptions
        @OptionGroup var options: DeviceOptions

        func validate() throws {
            guard !files.isEmpty || fromServer else { throw ValidationError("give comment files or --from-server") }
        }

        func run() throws {
            let doc = try DocumentBundle.open(at: bundle, device: options.resolve())
            reportWarnings(doc)
            let store = try account.keyStore()
            let me = try store.deviceIdentity().did
            let registry = ReviewSnapshotRegistry(homePath: account.resolvedHome.path)

            var batches: [(snapshotId: String, source: String, items: [ReviewCommentFile.SealedComment])] = []
            for file in files {
                let bytes: [UInt8]
                do { bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file))) } catch {
                    throw CommandFailure.user("cannot read \(file): \(error.localizedDescription)")
                }
                let decoded = try ReviewCommentFile.decode(bytes)
                batches.append((decoded.snapshotId, file, decoded.items))
            }
            if fromServer {
                let links = registry.entries().filter { $0.form == "link" && $0.documentId == doc.metadata.documentID }
                guard !links.isEmpty else {
                    throw CommandFailure.user("this home made no review links of \(bundle) (imprint export-snapshot --link)")
                }
                // One account per server; revoked links still hold the comments posted before.
                var accounts: [String: SyncAccount] = [:]
                for entry in links {
                    guard let server = entry.server, let zoneId = entry.zoneId else { continue }
                    let sync = try accounts[server] ?? account.account(fallback: server)
                    accounts[server] = sync
                    let fetched = try runBlocking { try await ReviewLink.comments(zoneId: zoneId, zones: sync.zones) }
                    if fetched.skipped > 0 {
                        FileHandle.standardError.write(Data("warning: skipped \(fetched.skipped) record\(fetched.skipped == 1 ? "" : "s") of snapshot \(entry.snapshotId) that are not sealed comments\n".utf8))
                    }
                    batches.append((entry.snapshotId, "snapshot \(entry.snapshotId) on \(server)", fetched.items))
                }
            }

            var comments: [ReviewComment] = []
            var rejected: [String] = []
            for batch in batches {
                if let entry = try registry.entry(batch.snapshotId), entry.documentId != doc.metadata.documentID {
                    throw CommandFailure.user("\(batch.source): these comments are on snapshot \(batch.snapshotId) of another document (\(entry.title))")
                }
                guard let raw = try store.snapshotKey(snapshot: batch.snapshotId, for: me) else {
                    throw CommandFailure.user("\(batch.source): this home holds no comment key for snapshot \(batch.snapshotId) (exported from another home, or its key was deleted)")
                }
                let key = try P256.KeyAgreement.PrivateKey(rawRepresentation: raw)
                for (index, item) in batch.items.enumerated() {
                    do { comments.append(try CommentSealing.open(item, snapshotId: batch.snapshotId, with: key)) } catch {
                        rejected.append("\(batch.source) #\(index + 1): \(error)")
                    }
                }
            }
            let result = try CommentImport.merge(comments, into: doc)
            for line in rejected { FileHandle.standardError.write(Data("warning: rejected \(line)\n".utf8)) }
            if json {
                printJSON(["added": .int(Int64(result.added)), "duplicates": .int(Int64(result.duplicates)),
                           "resolved": .int(Int64(result.resolved)), "unknownTargets": .int(Int64(result.unknownTargets)),
                           "rejected": .int(Int64(rejected.count))])
            } else {
                print("imported \(result.added) comment\(result.added == 1 ? "" : "s"), \(result.duplicates) already present, \(result.resolved) resolved" +
                      (rejected.isEmpty ? "" : ", \(rejected.count) rejected"))
            }
            if !rejected.isEmpty {
                throw CommandFailure(message: "\(rejected.count) comment\(rejected.count == 1 ? " was" : "s were") damaged or forged and not imported", status: .data)
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Comments with the text they cover now, author, time, state.")

        @Argument(help: "The bundle.") var bundle: String
        @Flag(help: "Print a JSON array.") var json = false
        @OptionGroup var options: DeviceOptions
        @OptionGroup var incomplete: IncompleteOptions

        func run() throws {
            let doc = try incomplete.open(bundle, device: options.resolveForReading())
            let comments = try DocumentComment.all(in: doc.document, body: doc.body)
            if json {
                print(JSON.array(comments.map { c in
                    var fields: [String: JSON] = [
                        "id": .string(c.id), "kind": .string(c.kind), "author": .string(c.author), "text": .string(c.text),
                        "quote": .string(c.quote), "createdAt": .string(timeText(c.createdAt)),
                        "resolved": .bool(c.resolved), "anchoring": .string(c.anchoring.rawValue),
                    ]
                    if let range = c.range {
                        fields["start"] = .int(Int64(range.lowerBound))
                        fields["end"] = .int(Int64(range.upperBound))
                    }
                    if let covered = c.coveredText { fields["coveredText"] = .string(covered) }
                    if let target = c.target { fields["inReplyTo"] = .string(target) }
                    if let snapshot = c.snapshot { fields["snapshot"] = .string(snapshot) }
                    return .object(fields)
                }).serialized)
                return
            }
            if comments.isEmpty { print("no comments"); return }
            for c in comments where c.kind != "reply" {
                let author = c.author.isEmpty ? "Anonymous" : c.author
                print("\(c.resolved ? "[resolved] " : "")\(author), \(timeText(c.createdAt)): \(c.text)")
                switch c.anchoring {
                case .cursors: print("    on \"\(c.coveredText ?? "")\" (\(c.range!.lowerBound)..<\(c.range!.upperBound))")
                case .quote: print("    on \"\(c.coveredText ?? "")\" (found by its quote; the anchored words were rewritten)")
                case .detached: print("    its words are gone; it was on \"\(c.quote)\"")
                }
                for reply in comments where reply.kind == "reply" && reply.target == c.id {
                    print("    reply from \(reply.author.isEmpty ? "Anonymous" : reply.author): \(reply.text)")
                }
            }
        }
    }
}

/// Milliseconds since 1970 as RFC 3339.
private func timeText(_ milliseconds: Int64) -> String {
    RFC3339.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
}
