import ArgumentParser
import Crypto
import Foundation
import ImprintCRDT
import ImprintDelivery
import ImprintFiles
import ImprintSnapshot
import ImprintKeys
import ImprintStore
import ImprintSync

/// `imprint export-snapshot <bundle> -o review.html (--password-file F | --link)`: one
/// self-contained, encrypted, read-only viewer of the document (docs/reviewer-snapshots.md).
struct ExportSnapshot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-snapshot",
        abstract: "Export an encrypted, read-only reviewer snapshot as one HTML file.")

    @Argument(help: "The bundle.") var bundle: String
    @Option(name: .shortAndLong, help: "The HTML file to write.") var output: String
    @Option(name: .long, help: "A file holding the password (its first line; at least 8 characters).")
    var passwordFile: String?
    @Flag(name: .long, help: "Store the snapshot on the server and print a link whose fragment holds the key.")
    var link = false
    @Option(name: .long, help: "Export this version: change hashes (hex), comma-separated.") var at: String?
    @Option(name: .long, help: "Refuse to open after this time (RFC 3339, or YYYY-MM-DD meaning its end in UTC).")
    var expires: String?
    @Option(name: .long, help: "PBKDF2 iterations (at least 600000).") var iterations = 600_000
    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var account: AccountOptions
    @OptionGroup var options: DeviceOptions
    @OptionGroup var incomplete: IncompleteOptions

    func validate() throws {
        guard (passwordFile != nil) != link else { throw ValidationError("give exactly one of --password-file F and --link") }
        guard iterations >= ReviewEnvelope.minimumIterations, iterations <= ReviewEnvelope.maximumIterations else {
            throw ValidationError("--iterations must be \(ReviewEnvelope.minimumIterations)...\(ReviewEnvelope.maximumIterations)")
        }
    }

    func run() throws {
        let doc = try incomplete.open(bundle, device: options.resolveForReading())
        let heads = try parseHeads(doc)
        let expiry = try parseExpiry()
        let password = try readPassword()

        // The link form talks to the server as this home's identity (it owns the snapshot
        // zone); the password form needs no server and makes the home if there is none.
        let sync: SyncAccount? = link ? try account.account(fallback: try? SharedDocument.link(ofBundleAt: bundle)?.server) : nil
        let store: any KeyStore = try sync?.keyStore ?? account.keyStore(create: true)
        let identity = try sync?.identity ?? store.deviceIdentity()
        let commentKey = P256.KeyAgreement.PrivateKey()
        let snapshotId = ReviewExport.newSnapshotId()
        let source = sync.map { ReviewEnvelope.LinkSource(server: $0.serverURL, zoneId: ReviewLink.zoneId(snapshotId: snapshotId)) }
        let exportOptions = ReviewExport.Options(heads: heads, password: password, iterations: iterations, expires: expiry,
                                                 commentKey: commentKey.publicKey, snapshotId: snapshotId, link: source)
        let snapshot = try ReviewExport.export(doc, options: exportOptions)
        for warning in snapshot.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        try store.saveSnapshotKey(Array(commentKey.rawRepresentation), snapshot: snapshot.snapshotId, for: identity.did)

        var entry = ReviewSnapshotRegistry.Entry(
            snapshotId: snapshot.snapshotId, documentId: snapshot.content.documentId, title: snapshot.content.title,
            bundle: URL(fileURLWithPath: bundle).standardizedFileURL.path, form: link ? "link" : "password",
            exportedAt: snapshot.content.exportedAt, expires: snapshot.content.expires, heads: snapshot.content.heads,
            output: URL(fileURLWithPath: output).standardizedFileURL.path)
        var url: String?
        if let sync {
            let published: ReviewLink
            do {
                published = try runBlocking {
                    try await ReviewLink.publish(snapshot, zones: sync.zones, server: sync.serverURL, expires: expiry)
                }
            } catch {
                _ = try? store.deleteSnapshotKey(snapshot: snapshot.snapshotId, for: identity.did)
                throw error
            }
            entry.server = published.server
            entry.zoneId = published.zoneId
            entry.recordName = published.recordName
            entry.commentCapability = published.commentCapability
            url = published.url
        }
        let html = Array(snapshot.html.utf8)
        try AtomicFile.write(html, to: output, mode: 0o644)
        try ReviewSnapshotRegistry(homePath: account.resolvedHome.path).save(entry)

        if json {
            var fields: [String: JSON] = [
                "snapshotId": .string(snapshot.snapshotId), "output": .string(output), "bytes": .int(Int64(html.count)),
                "contentBytes": .int(Int64(snapshot.plaintextBytes)), "form": .string(entry.form),
                "heads": .array(snapshot.content.heads.map { .string($0) }),
            ]
            if let url { fields["url"] = .string(url) }
            if let expires = snapshot.content.expires { fields["expires"] = .string(expires) }
            printJSON(fields)
        } else {
            print("exported \(output): \(html.count) bytes, snapshot \(snapshot.snapshotId)" +
                  (snapshot.content.expires.map { ", expires \($0)" } ?? ""))
            if let url {
                print("send this link (the part after # is the key; browsers never send it to a server). A reviewer who")
                print("would rather not run the server's page can open \(output) (the viewer pinned in the file) and paste the link:")
                print(url)
            } else {
                print("send the file and, separately, the password; import the reviewer's comments with: imprint comments import \(bundle) <file>")
            }
        }
    }

    func parseHeads(_ doc: DocumentBundle) throws -> [ChangeHash]? {
        guard let at, !at.isEmpty else { return nil }
        let heads = try at.split(separator: ",").map { text -> ChangeHash in
            guard let hash = ChangeHash(hex: String(text).trimmingCharacters(in: .whitespaces)) else {
                throw CommandFailure.user("--at: \(text) is not a change hash")
            }
            guard doc.document.contains(hash) else { throw CommandFailure.user("--at: this document has no change \(text)") }
            return hash
        }
        return heads
    }

    func parseExpiry() throws -> Date? {
        guard let expires else { return nil }
        var date = RFC3339.date(from: expires)
        if date == nil, let day = try? Date.ISO8601FormatStyle().year().month().day().parse(expires) {
            date = day.addingTimeInterval(86_400 - 0.001)
        }
        guard let date else { throw CommandFailure.user("--expires: \(expires) is not an RFC 3339 time or a YYYY-MM-DD date") }
        guard date > Date() else { throw CommandFailure.user("--expires: \(expires) is in the past") }
        return date
    }

    func readPassword() throws -> String? {
        guard let passwordFile else { return nil }
        guard let data = FileManager.default.contents(atPath: passwordFile), let text = String(data: data, encoding: .utf8) else {
            throw CommandFailure.user("cannot read the password file \(passwordFile)")
        }
        let password = String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
        guard password.count >= 8 else {
            throw CommandFailure.user("the password in \(passwordFile) is shorter than 8 characters; a reviewer copy can be attacked offline, use a long one")
        }
        return password
    }
}
