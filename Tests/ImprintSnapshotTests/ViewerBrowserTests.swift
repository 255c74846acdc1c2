import Crypto
import Foundation
import ImprintBundle
import ImprintEncoding
import ImprintSnapshot
import ImprintStore
import ImprintTestSupport
import Testing

/// The viewer in a real browser (headless Chromium through selenium): opened from `file://`
/// and from a real HTTP server on loopback, unlocked, read, commented, reloaded, downloaded;
/// the comments imported after concurrent edits land on the same words. Screenshots of every
/// step are kept in `.build/test-artifacts/reviewer-snapshots/`.
@Suite(.serialized, .enabled(if: ReviewBrowser.available, "chromium, chromedriver or .venv-peers is missing"))
struct ViewerBrowserTests {
    static let password = "correct horse battery staple"
    static let body = """
        # Field notes

        Alpha beta gamma with **bold words** and *emphasis*, a [safe link](https://example.com/x) \
        and a [bad link](javascript:alert(document.cookie)), `code`, and 😀 emoji.

        - first point
        - second point

        <img src=x onerror="document.body.dataset.pwned='yes'"> <script>document.body.dataset.pwned='yes'</script> stay text.

        ![the figure](figure.png)
        """

    struct Fixture {
        let dir: TemporaryDirectory
        let bundle: DocumentBundle
        let ownerKey: P256.KeyAgreement.PrivateKey
        let snapshot: ExportedReviewSnapshot
        let page: String
    }

    static func fixture(_ name: String, expires: Date? = nil) throws -> Fixture {
        let dir = TemporaryDirectory("viewer-\(name)")
        let bundle = try reviewBundle(dir, body)
        let png = try #require(Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="))
        try png.write(to: URL(fileURLWithPath: dir.file("figure.png")))
        try bundle.addAsset(contentsOf: dir.file("figure.png"), name: "figure.png")
        let ownerKey = P256.KeyAgreement.PrivateKey()
        let snapshot = try ReviewExport.export(bundle, options: .init(password: password, expires: expires, commentKey: ownerKey.publicKey))
        let page = dir.file("review copy.html")
        try Data(snapshot.html.utf8).write(to: URL(fileURLWithPath: page))
        return Fixture(dir: dir, bundle: bundle, ownerKey: ownerKey, snapshot: snapshot, page: page)
    }

    static func step(_ kind: String, _ fields: [String: JSONValue] = [:]) -> JSONValue {
        .object(fields.merging(["do": .string(kind)]) { a, _ in a })
    }

    @Test(arguments: [false, true])
    func reviewerReadsCommentsAndTheCommentsComeHome(overHTTP: Bool) async throws {
        try await Self.readCommentAndImport(browser: .chromium, overHTTP: overHTTP)
    }

    /// The same in Firefox ESR (Marionette), from `file://` and over HTTP. Firefox has no
    /// performance log of requests: its network check reads the page's performance entries.
    @Test(.enabled(if: ReviewBrowser.firefoxAvailable, "firefox-esr or marionette-driver is missing"), arguments: [false, true])
    func inFirefox(overHTTP: Bool) async throws {
        try await Self.readCommentAndImport(browser: .firefox, overHTTP: overHTTP)
    }

    static func readCommentAndImport(browser: ReviewBrowser.Kind, overHTTP: Bool) async throws {
        let name = (browser == .chromium ? "" : "\(browser)-") + (overHTTP ? "http" : "file")
        let f = try Self.fixture(name)
        let downloads = f.dir.file("downloads")
        let results = try await ReviewBrowser.run(page: f.page, steps: [
            Self.step("shot", ["name": "1-locked"]),
            Self.step("unlock", ["password": "not the password"]),
            Self.step("shot", ["name": "2-wrong-password"]),
            Self.step("unlock", ["password": .string(Self.password)]),
            Self.step("read"),
            Self.step("shot", ["name": "3-open"]),
            Self.step("comment", ["quote": "beta gamma", "text": "Which gamma?", "author": "Rita"]),
            Self.step("comment", ["quote": "bold words and", "text": "Too strong.", "author": "Rita"]),
            Self.step("reply", ["index": 0, "text": "The second one."]),
            Self.step("resolve", ["index": 1]),
            Self.step("shot", ["name": "4-commented"]),
            Self.step("reload"),
            Self.step("unlock", ["password": .string(Self.password)]),
            Self.step("comments"),
            Self.step("download"),
            Self.step("shot", ["name": "5-downloaded"]),
            Self.step("marks"),
            Self.step("network"),
        ], name: name, serve: overHTTP, browser: browser, downloads: downloads)
        func result(_ kind: String, _ occurrence: Int = 0) throws -> JSONValue {
            let matching = results.filter { $0["do"]?.stringValue == kind }
            return try #require(matching.count > occurrence ? matching[occurrence] : nil, "no \(kind) step")
        }

        // Locked at first; a wrong password says so and keeps the page locked.
        #expect(try result("open")["state"]?.stringValue == "locked")
        #expect(try result("unlock", 0)["error"]?.stringValue == "password")
        #expect(try result("unlock", 0)["status"]?.stringValue?.contains("Wrong password") == true)
        #expect(try result("unlock", 1)["state"]?.stringValue == "open")

        // The text is visible, rendered; what a collaborator typed as markup stays text.
        let read = try result("read")
        let text = try #require(read["text"]?.stringValue)
        #expect(text.contains("Alpha beta gamma with bold words and emphasis, a safe link and a bad link, code, and 😀 emoji."))
        #expect(text.contains("<img src=x onerror=\"document.body.dataset.pwned='yes'\"> <script>"))
        #expect(read["heading"]?.stringValue == "Field notes")
        #expect(read["links"]?.arrayValue.compactMap(\.stringValue) == ["https://example.com/x"])  // the javascript: link has no href
        let images = read["images"]?.arrayValue ?? []
        #expect(images.count == 1 && images.first?["alt"]?.stringValue == "the figure" && images.first?["loaded"]?.boolValue == true)
        #expect(read["pwned"] == .null, "markup in the document ran")

        // Comments survive the reload (kept encrypted in the browser's storage), unsent.
        let shown = try result("comments")["comments"]?.arrayValue ?? []
        #expect(shown.count == 2)
        #expect(shown.map { $0["text"]?.stringValue } == ["Which gamma?", "Too strong."])
        #expect(shown.first?["replies"]?.arrayValue.compactMap(\.stringValue) == ["The second one."])
        #expect(shown.allSatisfy { $0["pending"]?.boolValue == true })
        #expect(shown.last?["resolved"]?.boolValue == true)

        // A file:// page asks for nothing but itself; an HTTP page for nothing but itself too.
        let network = try result("network")
        let pageURL = try #require(results.first?["url"]?.stringValue)
        // (Firefox names a file:// page's own navigation entry "document".)
        let requested = network["urls"]?.arrayValue.compactMap(\.stringValue).map { $0 == "document" ? pageURL : $0 }
            .filter { !$0.hasPrefix("chrome://") && !$0.hasPrefix("data:") && !$0.hasPrefix("blob:") } ?? []
        #expect(!requested.isEmpty && requested.allSatisfy { $0 == pageURL }, "requests: \(requested)")
        #expect(network["console"]?.arrayValue.isEmpty == true, "console: \(network["console"] ?? .null)")
        #expect(try result("marks")["marks"]?["imprint-readable"]?.numberValue != nil)

        // The downloaded file opens with the owner's key only; four things happened.
        let file = try ReviewCommentFile.decode(Array((try result("download")["text"]?.stringValue ?? "").utf8))
        #expect(file.snapshotId == f.snapshot.snapshotId)
        let comments = try file.items.map { try CommentSealing.open($0, snapshotId: file.snapshotId, with: f.ownerKey) }
        #expect(comments.map(\.kind) == [.comment, .comment, .reply, .resolve])

        // Meanwhile the owner and a second device kept editing, before and inside the ranges.
        let phone = try DocumentBundle.open(at: f.dir.file("doc.imprint"), device: try DeviceID("phone"))
        try phone.insert("Draft 2. ", at: 15)                     // before "Alpha"
        try f.bundle.insert("(and delta) ", at: 32)               // after "gamma ", before "with"
        try f.bundle.delete(at: 21, count: 5)                     // "beta " ... deletes "beta "
        try f.bundle.insert("beta ", at: 21)                      // ...and types it again
        let owner = try DocumentBundle.open(at: f.dir.file("doc.imprint"), device: try DeviceID("laptop"))
        let imported = try CommentImport.merge(comments, into: owner)
        #expect(imported.added == 3 && imported.resolved == 1)
        let listed = try DocumentComment.all(in: owner.document, body: owner.body)
        let byText = Dictionary(uniqueKeysWithValues: listed.map { ($0.text, $0) })
        #expect(byText["Too strong."]?.coveredText == "bold words** and")  // the source of the rendered selection
        #expect(byText["Too strong."]?.resolved == true)
        #expect(byText["The second one."]?.target == byText["Which gamma?"]?.id)
        // "beta " was deleted and retyped: the comment's start moved to the retyped... no: its
        // cursors name the deleted characters, so it now starts where they were.
        #expect(byText["Which gamma?"]?.coveredText?.hasSuffix("gamma") == true, "\(byText["Which gamma?"]?.coveredText ?? "nil")")
    }

    /// A tampered file, an expired snapshot and a damaged envelope each say what is wrong.
    @Test func damagedTamperedAndExpiredCopiesSaySo() async throws {
        let f = try Self.fixture("failures", expires: Date().addingTimeInterval(3))
        let html = try String(contentsOfFile: f.page, encoding: .utf8)

        // Tampered: one base64 character of the ciphertext changed.
        var tamperedEnvelope = f.snapshot.envelope
        let sealedText = try #require(tamperedEnvelope.payload?.data)
        var bytes = try #require(Data(base64Encoded: sealedText))
        bytes[bytes.count / 2] ^= 0x01
        tamperedEnvelope.payload?.data = bytes.base64EncodedString()
        try Data(ViewerPage.html(envelope: tamperedEnvelope).utf8).write(to: URL(fileURLWithPath: f.dir.file("tampered.html")))
        // Damaged: the envelope is not JSON.
        let start = try #require(html.range(of: "id=\"imprint-envelope\">")).upperBound
        try Data((String(html[..<start]) + "{broken" + String(html[start...])).utf8).write(to: URL(fileURLWithPath: f.dir.file("damaged.html")))

        let unlock = [Self.step("unlock", ["password": .string(Self.password)]), Self.step("shot", ["name": "result"])]
        let tampered = try await ReviewBrowser.run(page: f.dir.file("tampered.html"), steps: unlock, name: "tampered", downloads: f.dir.path)
        #expect(tampered.last?["do"]?.stringValue == "shot")
        #expect(tampered[1]["error"]?.stringValue == "tampered")
        #expect(tampered[1]["status"]?.stringValue?.contains("tampered") == true)

        let damaged = try await ReviewBrowser.run(page: f.dir.file("damaged.html"), steps: [Self.step("shot", ["name": "result"])],
                                                  name: "damaged", downloads: f.dir.path)
        #expect(damaged[0]["state"]?.stringValue == "failed")
        #expect(damaged[0]["status"]?.stringValue?.contains("not a readable review copy") == true)

        try await Task.sleep(for: .seconds(3.5))
        let expired = try await ReviewBrowser.run(page: f.page, steps: unlock, name: "expired", downloads: f.dir.path)
        #expect(expired[1]["error"]?.stringValue == "expired")
        #expect(expired[1]["status"]?.stringValue?.contains("expired") == true)
    }
}
