import Crypto
import Foundation
import ImprintBundle
import ImprintKeys
import ImprintSnapshot
import ImprintStore

/// The reviewer part of `imprint demo`: the owner exports an encrypted, read-only snapshot as
/// one HTML file; a reviewer without an account opens it (here in Swift, doing exactly what
/// the page's script does in a browser) and comments on a few words; the owner keeps
/// editing, imports the comment, and it sits on the same words.
enum ReviewerDemo {
    static func run(_ report: DemoReport) throws {
        report.say("Reviewer snapshot: a read-only encrypted copy, a comment that comes home", heading: true)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-demo-review-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }

        let owner = try DocumentBundle.create(at: root + "/essay.imprint", device: try DeviceID("ada"), title: "On rivers")
        try owner.insert("# On rivers\n\nThe heron waits at the bend where the water slows.\n", at: 0)
        let home = ImprintHome(path: root + "/home-ada")
        try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: true)
        let keys = try home.openKeyStore(passphrase: nil)
        let me = try keys.deviceIdentity().did

        let password = "four words, said aloud"
        let commentKey = P256.KeyAgreement.PrivateKey()
        let started = Date()
        let snapshot = try ReviewExport.export(owner, options: .init(password: password, commentKey: commentKey.publicKey))
        try keys.saveSnapshotKey(Array(commentKey.rawRepresentation), snapshot: snapshot.snapshotId, for: me)
        let html = Array(snapshot.html.utf8)
        try Data(html).write(to: URL(fileURLWithPath: root + "/review.html"))
        let hidden = html.firstRange(of: Array("heron".utf8)) == nil
        report.say("owner exported review.html: \(html.count) bytes in \(Int(Date().timeIntervalSince(started) * 1000)) ms (PBKDF2, 600,000 iterations); \"heron\" appears in the file: \(!hidden)")

        try report.check("snapshot exported", hidden, "review.html, \(html.count) bytes, no word of the text in it")

        // The reviewer's side: what the viewer does in the browser.
        let envelope = try ReviewSnapshotReader.envelope(inHTML: html)
        let wrong = (try? ReviewSnapshotReader.open(envelope, password: "a guess")) == nil
        let content = try ReviewSnapshotReader.open(envelope, password: password)
        report.say("reviewer: a wrong password is refused: \(wrong); with the right one the text reads \(content.body.split(separator: "\n").last.map { String($0).debugDescription } ?? "")")
        try report.check("wrong password refused", wrong, "PBKDF2 + AES-GCM: a guess opens nothing; the password reads the text")
        let words = "where the water slows"
        let scalars = Array(content.body.unicodeScalars), needle = Array(words.unicodeScalars)
        guard let at = (0...(scalars.count - needle.count)).first(where: { Array(scalars[$0..<($0 + needle.count)]) == needle }) else {
            throw DemoReport.Failure(description: "the demo text lost its words")
        }
        let comment = ReviewComment(id: UUID().uuidString.lowercased(), snapshotId: content.snapshotId, kind: .comment, author: "Rita",
                                    text: "Lovely; maybe \"eddies\"?", start: content.anchors.cursor(at: at, side: .before),
                                    end: content.anchors.cursor(at: at + needle.count - 1, side: .after), quote: words,
                                    createdAt: Int64(Date().timeIntervalSince1970 * 1000))
        let file = ReviewCommentFile(snapshotId: content.snapshotId, items: [try CommentSealing.seal(comment, to: try P256.KeyAgreement.PublicKey(
            x963Representation: Data(base64Encoded: content.commentKey) ?? Data()))])
        try Data(file.encoded()).write(to: URL(fileURLWithPath: root + "/rita.imprint-comments"))
        report.say("reviewer: commented on \"\(words)\"; the comment leaves encrypted to the owner (rita.imprint-comments, \(file.encoded().count) bytes)")

        // Meanwhile the owner kept writing, before and after those words.
        try owner.insert("Grey and patient, ", at: 13)
        try owner.insert(" Nobody hurries it.", at: try owner.text().unicodeScalars.count - 1)
        let decoded = try ReviewCommentFile.decode(Array(try Data(contentsOf: URL(fileURLWithPath: root + "/rita.imprint-comments"))))
        guard let raw = try keys.snapshotKey(snapshot: decoded.snapshotId, for: me) else { throw DemoReport.Failure(description: "the comment key is gone") }
        let opened = try decoded.items.map { try CommentSealing.open($0, snapshotId: decoded.snapshotId, with: try .init(rawRepresentation: raw)) }
        let result = try CommentImport.merge(opened, into: owner)
        let landed = try DocumentComment.all(in: owner.document, body: owner.body).first
        report.say("owner kept editing, then imported \(result.added) comment: Rita on \"\(landed?.coveredText ?? "?")\": \(landed?.text ?? "?")")
        let same = landed?.coveredText == words
        report.say("the comment sits on the words it was made on: \(same)")
        try report.check("comment comes home anchored", same, "Rita's comment imported on \"\(landed?.coveredText ?? "?")\" after the owner's edits before and after it")
    }
}
