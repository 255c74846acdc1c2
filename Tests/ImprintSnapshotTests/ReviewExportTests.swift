import Crypto
import Foundation
import ImprintBundle
import ImprintCRDT
import ImprintSnapshot
import ImprintStore
import ImprintTestSupport
import Testing

/// A bundle holding `text`, written by `device`.
func reviewBundle(_ dir: TemporaryDirectory, _ text: String, title: String = "Field notes",
                  device: String = "laptop") throws -> DocumentBundle {
    let bundle = try DocumentBundle.create(at: dir.file("doc.imprint"), device: try DeviceID(device), title: title)
    try bundle.insert(text, at: 0)
    return bundle
}

/// The code of the ``ReviewSnapshotError`` `body` throws; nil if it returns or throws another error.
func errorCode(_ body: () throws -> Any) -> ReviewSnapshotError.Code? {
    do {
        _ = try body()
        return nil
    } catch {
        return (error as? ReviewSnapshotError)?.code
    }
}

@Suite struct ReviewExportTests {
    static let password = "correct horse battery staple"

    @Test func exportReadsBackWithThePasswordOnly() throws {
        let dir = TemporaryDirectory("review-export")
        let marker = "PLANTED-PLAINTEXT-MARKER-7f3a"
        let bundle = try reviewBundle(dir, "# Notes\n\nThe \(marker) sits in *the* body.\n", title: "Title \(marker)")
        let ownerKey = P256.KeyAgreement.PrivateKey()
        let snapshot = try ReviewExport.export(bundle, options: .init(password: Self.password, commentKey: ownerKey.publicKey))
        let html = Array(snapshot.html.utf8)

        // Nothing of the document in the file's bytes (the title is not in <title> either).
        #expect(html.firstRange(of: Array(marker.utf8)) == nil)
        #expect(html.firstRange(of: Array("Notes".utf8)) == nil)

        let envelope = try ReviewSnapshotReader.envelope(inHTML: html)
        #expect(envelope.password?.iterations == 600_000)
        #expect(envelope.password?.kdf == "PBKDF2-SHA256")
        let content = try ReviewSnapshotReader.open(envelope, password: Self.password)
        #expect(content.body == (try bundle.text()))
        #expect(content.title == "Title \(marker)")
        #expect(content.documentId == bundle.metadata.documentID)
        #expect(content.commentKey == ownerKey.publicKey.x963Representation.base64EncodedString())
        #expect(content.heads == bundle.document.currentHeads.map(\.hex))

        #expect(errorCode { try ReviewSnapshotReader.open(envelope, password: "wrong password") } == .wrongPassword)
    }

    /// The Content-Security-Policy names exactly the inline script and style, and forbids the
    /// network: a changed byte of either would stop the browser from running it.
    @Test func thePolicyPinsTheInlineScriptAndStyle() throws {
        let dir = TemporaryDirectory("review-csp")
        let bundle = try reviewBundle(dir, "text")
        let html = try ReviewExport.export(bundle, options: .init(password: Self.password, commentKey: P256.KeyAgreement.PrivateKey().publicKey)).html
        func between(_ open: String, _ close: String) throws -> String {
            let start = try #require(html.range(of: open)).upperBound
            return String(html[start..<(try #require(html[start...].range(of: close)).lowerBound)])
        }
        let script = try between("<script>", "</script>")
        let style = try between("<style>", "</style>")
        let policy = try between("http-equiv=\"Content-Security-Policy\" content=\"", "\"")
        #expect(policy.contains("'sha256-\(Data(SHA256.hash(data: Array(script.utf8))).base64EncodedString())'"))
        #expect(policy.contains("'sha256-\(Data(SHA256.hash(data: Array(style.utf8))).base64EncodedString())'"))
        #expect(policy.hasPrefix("default-src 'none';"))
        #expect(!policy.contains("connect-src"))
        #expect(!policy.contains("unsafe"))
        // No external resource anywhere in the page.
        for needle in ["src=\"http", "href=\"http", "@import", "url(http"] { #expect(!html.contains(needle)) }
    }

    @Test func tamperedBytesAreRefusedWithTypedErrors() throws {
        let dir = TemporaryDirectory("review-tamper")
        let bundle = try reviewBundle(dir, String(repeating: "A long enough body. ", count: 50))
        let snapshot = try ReviewExport.export(bundle, options: .init(password: Self.password, commentKey: P256.KeyAgreement.PrivateKey().publicKey))
        let seed = testSeed("ReviewExportTests.tamper", fallback: 0x7A3F)
        var rng = SplitMix64(seed: seed)
        var payload = Array(Data(base64Encoded: snapshot.envelope.payload!.data)!)
        for _ in 0..<8 {
            var tampered = snapshot.envelope
            var bytes = payload
            bytes[Int(rng.next() % UInt64(bytes.count))] ^= UInt8(1 << (rng.next() % 8))
            tampered.payload!.data = Data(bytes).base64EncodedString()
            #expect(errorCode { try ReviewSnapshotReader.open(tampered, password: Self.password) } == .decryptionFailed, "seed \(seed)")
        }
        payload.removeLast(20)
        var truncated = snapshot.envelope
        truncated.payload!.data = Data(payload).base64EncodedString()
        #expect(throws: ReviewSnapshotError.self) { try ReviewSnapshotReader.open(truncated, password: Self.password) }

        // Hostile envelopes: too few or too many iterations, other kdf, junk around the page.
        var weak = snapshot.envelope
        weak.password!.iterations = 1000
        #expect(throws: ReviewSnapshotError.self) { try ReviewSnapshotReader.open(weak, password: Self.password) }
        weak.password!.iterations = Int.max
        #expect(throws: ReviewSnapshotError.self) { try ReviewSnapshotReader.open(weak, password: Self.password) }
        var kdf = snapshot.envelope
        kdf.password!.kdf = "MD5"
        #expect(throws: ReviewSnapshotError.self) { try ReviewSnapshotReader.open(kdf, password: Self.password) }
        let html = Array(snapshot.html.utf8)
        let envelopeStart = try #require(html.firstRange(of: Array("id=\"imprint-envelope\">".utf8))).upperBound
        // Cuts inside the envelope, wherever it ends (its length varies with what compresses).
        let envelopeEnd = try #require(html[envelopeStart...].firstRange(of: Array("</script>".utf8))).lowerBound
        for cut in [0, 100, envelopeStart, envelopeStart + 10, (envelopeStart + envelopeEnd) / 2, envelopeEnd - 1] {
            #expect(throws: ReviewSnapshotError.self, "cut at \(cut)") {
                var damaged = Array(html[..<cut])
                damaged += Array("<script>".utf8)
                let envelope = try ReviewSnapshotReader.envelope(inHTML: damaged)
                _ = try ReviewSnapshotReader.open(envelope, password: Self.password)
            }
        }
        for _ in 0..<200 {
            let junk = (0..<Int(rng.next() % 400)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            #expect(throws: ReviewSnapshotError.self) { try ReviewSnapshotReader.envelope(json: junk) }
        }
    }

    /// `--at`: an older version is exported, not the current one.
    @Test func exportsTheVersionAtGivenHeads() throws {
        let dir = TemporaryDirectory("review-heads")
        let bundle = try reviewBundle(dir, "first draft")
        let heads = bundle.document.currentHeads
        try bundle.insert(" and a second thought", at: 11)
        let snapshot = try ReviewExport.export(bundle, options: .init(heads: heads, password: Self.password,
                                                                        commentKey: P256.KeyAgreement.PrivateKey().publicKey))
        #expect(snapshot.content.body == "first draft")
        #expect(snapshot.content.heads == heads.map(\.hex))
        // Anchors of the old version still name characters of the current document.
        let cursor = try #require(snapshot.content.anchors.cursor(at: 6, side: .before))
        #expect(try bundle.document.index(of: try #require(Cursor(cursor)), in: bundle.body) == 6)
    }

    @Test func imagesTheBodyNamesAreInlinedOthersAreNot() throws {
        let dir = TemporaryDirectory("review-images")
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 40)
        try Data(png).write(to: URL(fileURLWithPath: dir.file("figure.png")))
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: dir.file("notes.txt")))
        try Data(png + [1]).write(to: URL(fileURLWithPath: dir.file("unused.png")))
        let bundle = try reviewBundle(dir, "See ![the figure](figure.png) and ![notes](notes.txt).")
        try bundle.addAsset(contentsOf: dir.file("figure.png"), name: "figure.png")
        try bundle.addAsset(contentsOf: dir.file("notes.txt"), name: "notes.txt")
        try bundle.addAsset(contentsOf: dir.file("unused.png"), name: "unused.png")
        let snapshot = try ReviewExport.export(bundle, options: .init(password: Self.password, commentKey: P256.KeyAgreement.PrivateKey().publicKey))
        #expect(snapshot.content.assets.map(\.name) == ["figure.png"])
        #expect(snapshot.content.assets.first?.mime == "image/png")
        #expect(snapshot.warnings.contains { $0.contains("notes.txt") })
    }

    @Test func anchorsNameEveryCharacterAsTheEngineDoes() throws {
        let dir = TemporaryDirectory("review-anchors")
        let bundle = try reviewBundle(dir, "héllo 😀 wörld")
        try bundle.delete(at: 2, count: 3)
        try bundle.insert("XY", at: 4)
        let laptopView = try DocumentBundle.open(at: dir.file("doc.imprint"), device: try DeviceID("phone"))
        try laptopView.insert("phone ", at: 0)
        let merged = try DocumentBundle.open(at: dir.file("doc.imprint"), device: try DeviceID("laptop"))
        let content = try ReviewExport.export(merged, options: .init(password: Self.password, commentKey: P256.KeyAgreement.PrivateKey().publicKey)).content
        let length = content.body.unicodeScalars.count
        for position in 0..<length {
            #expect(content.anchors.cursor(at: position, side: .before) == (try merged.document.cursor(merged.body, at: position)).description)
        }
        #expect(content.anchors.cursor(at: length, side: .before) == nil)
    }
}
