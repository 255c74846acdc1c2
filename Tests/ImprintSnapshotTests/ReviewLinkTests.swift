import Foundation
import ImprintDelivery
import ImprintEncoding
import ImprintServerTestSupport
import ImprintTestSupport
import Testing

/// The link form end to end, as people use it: the owner's `imprint` publishes to a real
/// `imprint-server` on loopback; a reviewer opens the link in headless Chromium (the server's
/// page) and the owner's self-contained file (`file://`, cross-origin to the server, the link
/// pasted in; in Firefox too), reads, comments; the owner imports the comments from the server, anchored;
/// revoking and expiry close both; the server's files never hold the document's words.
@Suite(.serialized) struct ReviewLinkTests {
    /// `imprint-server --port 0` with its data in `dir`; stopped by `stop()`.
    final class Server: Sendable {
        let process: Process
        let url: String
        let data: String

        init(in dir: TemporaryDirectory) async throws {
            data = dir.file("server-data")
            let started = try await ServerExecutable.launchListening(["--port", "0", "--data", data])
            process = started.process
            url = "http://127.0.0.1:\(started.port)"
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    static let marker = "Heron-marker-7f3a"

    @Test func reviewersReadAndCommentThroughALinkAndTheOwnerRevokesIt() async throws {
        guard ReviewBrowser.available else { return }
        let dir = TemporaryDirectory("review-link")
        let server = try await Server(in: dir)
        defer { server.stop() }
        let home = dir.file("home")
        func run(_ arguments: String...) async throws -> SnapshotCLITests.Output {
            try await SnapshotCLITests.imprint(arguments, home: home, in: dir, server: server.url)
        }
        #expect(try await run("identity", "create").status == 0)
        #expect(try await run("new", "essay.imprint", "--title", "Essay").status == 0)
        let text = "The heron waits where the water slows. \(Self.marker) stays with the owner."
        #expect(try await run("edit", "essay.imprint", "--insert", "0", "--", text).status == 0)

        let exported = try await run("export-snapshot", "essay.imprint", "-o", "review.html", "--link", "--json")
        #expect(exported.status == 0, "\(exported.stderr)")
        let fields = try JSONDecoder().decode(JSONValue.self, from: Data(exported.stdout.utf8))
        let link = try #require(fields["url"]?.stringValue)
        let snapshotId = try #require(fields["snapshotId"]?.stringValue)
        #expect(link.hasPrefix(server.url + "/review#v1.\(snapshotId)."))
        // The file carries no ciphertext and no words: it needs the link.
        let html = try String(contentsOfFile: dir.file("review.html"), encoding: .utf8)
        #expect(!html.contains("heron") && !html.contains("\"payload\""))

        // The server's page, opened with the link: read, comment (posted at once).
        let served = try await ReviewBrowser.run(url: link, steps: [
            ["do": "settle"], ["do": "read"], ["do": "shot", "name": "1-served-open"],
            ["do": "comment", "quote": "water slows", "text": "Lovely line.", "author": "Rita"],
            ["do": "wait_status", "text": "Sent to the owner"], ["do": "shot", "name": "2-served-commented"],
        ], name: "link", downloads: dir.file("dl"))
        #expect(served[2]["text"]?.stringValue?.contains("The heron waits") == true, "\(served[2])")
        #expect(served[2]["state"]?.stringValue == "open")

        // The owner's file from file:// (origin null): the link pasted in, a second comment.
        let fromFile = try await ReviewBrowser.run(page: dir.file("review.html"), steps: [
            ["do": "shot", "name": "3-file-asks-for-link"],
            ["do": "paste_link", "link": .string(link)], ["do": "read"],
            ["do": "comment", "quote": "heron", "text": "Which heron?", "author": "Sam"],
            ["do": "wait_status", "text": "Sent to the owner"], ["do": "shot", "name": "4-file-commented"], ["do": "network"],
        ], name: "link", downloads: dir.file("dl"))
        #expect(fromFile[0]["state"]?.stringValue == "locked")
        #expect(fromFile[3]["text"]?.stringValue?.contains("The heron waits") == true, "\(fromFile[3])")
        let urls = fromFile.last?["urls"]?.arrayValue.compactMap(\.stringValue).filter { !$0.hasPrefix("chrome") && !$0.hasPrefix("data:") } ?? []
        #expect(urls.allSatisfy { $0.hasPrefix("file://") || $0.hasPrefix(server.url + "/xrpc/app.imprint.zone.") }, "\(urls)")

        // Firefox, from file:// too (its CORS and its `null` origin are its own).
        var expected = 2
        if ReviewBrowser.firefoxAvailable {
            let firefox = try await ReviewBrowser.run(page: dir.file("review.html"), steps: [
                ["do": "paste_link", "link": .string(link)], ["do": "read"],
                ["do": "comment", "quote": "where the", "text": "Where exactly?", "author": "Ada"],
                ["do": "wait_status", "text": "Sent to the owner"], ["do": "shot", "name": "4b-firefox-file-commented"],
            ], name: "link", browser: .firefox, downloads: dir.file("dl"))
            #expect(firefox[2]["text"]?.stringValue?.contains("The heron waits") == true, "\(firefox[2])")
            expected += 1
        }

        // The owner edits before and inside, then imports: every comment, on the same words.
        #expect(try await run("edit", "essay.imprint", "--insert", "0", "--", "Dawn. ").status == 0)
        #expect(try await run("edit", "essay.imprint", "--insert", "38", "--", "slow ").status == 0)
        let imported = try await run("comments", "import", "essay.imprint", "--from-server", "--json")
        #expect(imported.status == 0 && imported.stdout.contains("\"added\":\(expected)"), "\(imported.stdout) \(imported.stderr)")
        let again = try await run("comments", "import", "essay.imprint", "--from-server")
        #expect(again.status == 0 && again.stdout.contains("0 comments, \(expected) already present"), "\(again.stdout)")
        let listed = try await run("comments", "list", "essay.imprint")
        #expect(listed.stdout.contains("Rita") && listed.stdout.contains("Sam") && listed.stdout.contains("on \"heron\""), "\(listed.stdout)")
        #expect(listed.stdout.contains("on \"water slow slows\""), "\(listed.stdout)")

        // Revoked: the link and the file both say so; comments stay importable.
        let list = try await run("snapshots", "list", "--json")
        #expect(list.stdout.contains(snapshotId) && list.stdout.contains("\"active\""))
        let revoked = try await run("snapshots", "revoke", snapshotId)
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(try await run("snapshots", "list").stdout.contains("revoked"))
        let afterRevoke = try await ReviewBrowser.run(url: link, steps: [["do": "settle"], ["do": "shot", "name": "5-revoked"]],
                                                      name: "link", downloads: dir.file("dl"))
        #expect(afterRevoke[1]["error"]?.stringValue == "revoked", "\(afterRevoke[1])")
        #expect(afterRevoke[1]["status"]?.stringValue?.contains("revoked") == true)
        let fileAfterRevoke = try await ReviewBrowser.run(page: dir.file("review.html"), steps: [["do": "paste_link", "link": .string(link)]],
                                                          name: "link", downloads: dir.file("dl"))
        #expect(fileAfterRevoke[1]["error"]?.stringValue == "revoked", "\(fileAfterRevoke[1])")
        #expect(try await run("comments", "import", "essay.imprint", "--from-server").status == 0)

        // Expiry is the server's: a link past its time answers 410 like a revoked one.
        let expiry = Date().addingTimeInterval(3)
        let expiring = try await run("export-snapshot", "essay.imprint", "-o", "soon.html", "--link", "--json",
                                     "--expires", RFC3339.string(from: expiry))
        #expect(expiring.status == 0, "\(expiring.stderr)")
        let soon = try #require(try JSONDecoder().decode(JSONValue.self, from: Data(expiring.stdout.utf8))["url"]?.stringValue)
        try await Task.sleep(for: .seconds(max(0, expiry.timeIntervalSinceNow) + 0.5))
        let expired = try await ReviewBrowser.run(url: soon, steps: [["do": "settle"], ["do": "shot", "name": "6-expired"]],
                                                  name: "link", downloads: dir.file("dl"))
        #expect(expired[1]["error"]?.stringValue == "revoked", "\(expired[1])")
        #expect(try await run("snapshots", "list").stdout.contains("expired"))

        // A damaged link says so and fetches nothing.
        let damaged = try await ReviewBrowser.run(url: String(link.dropLast(3)), steps: [["do": "settle"]], name: "link", downloads: dir.file("dl"))
        #expect(damaged[1]["error"]?.stringValue == "invalid", "\(damaged[1])")

        // Nothing the server keeps holds the document's words, the reviewers' or the key.
        server.stop()
        let key = String(link.split(separator: ".").last ?? "")
        for needle in [Self.marker, "heron", "Lovely line", "Which heron", key] {
            #expect(try filesContaining(needle, under: server.data).isEmpty, "\(needle) found on the server")
        }
    }

    /// Every file under `root` whose bytes contain `needle`.
    func filesContaining(_ needle: String, under root: String) throws -> [String] {
        let bytes = Array(needle.utf8)
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let name = enumerator?.nextObject() as? String {
            let path = root + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            if let data = FileManager.default.contents(atPath: path), Array(data).firstRange(of: bytes) != nil { found.append(path) }
        }
        return found
    }
}
