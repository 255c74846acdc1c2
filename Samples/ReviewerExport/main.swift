// Reviewer export: an encrypted, read-only HTML copy of a document for a reviewer without an
// account, and the reviewer's comment coming back onto the words it was made on, although the
// owner kept editing. The reviewer's part (open with the password, comment) is what the page's
// script does in a browser; here it is done in Swift with the same formats.
//
//     swift run sample-reviewer-export [review.html]
import Crypto
import Foundation
import ImprintBundle
import ImprintSnapshot
import ImprintStore

let root = FileManager.default.temporaryDirectory.appendingPathComponent("reviewer-sample-\(UUID().uuidString.prefix(8))").path
try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: root) }
let output = CommandLine.arguments.dropFirst().first ?? root + "/review.html"

// The owner: a document, and a P-256 key pair for this snapshot's comments (an app keeps the
// private half in its key store, e.g. `KeyStore.saveSnapshotKey`).
let owner = try DocumentBundle.create(at: root + "/essay.imprint", device: try DeviceID("owner"), title: "On rivers")
try owner.insert("# On rivers\n\nThe heron waits at the bend where the water slows.\n", at: 0)
let commentKey = P256.KeyAgreement.PrivateKey()
let password = "a long passphrase, said aloud"
let snapshot = try ReviewExport.export(owner, options: .init(password: password, commentKey: commentKey.publicKey))
try Data(snapshot.html.utf8).write(to: URL(fileURLWithPath: output))
print("wrote \(output): \(snapshot.html.utf8.count) bytes; open it in a browser with the password \"\(password)\"")

// The reviewer: open the copy, select words, comment. The comment is sealed to the owner.
let content = try ReviewSnapshotReader.open(try ReviewSnapshotReader.envelope(inHTML: Array(snapshot.html.utf8)), password: password)
let words = "where the water slows"
let scalars = Array(content.body.unicodeScalars), needle = Array(words.unicodeScalars)
let at = (0...(scalars.count - needle.count)).first { Array(scalars[$0..<($0 + needle.count)]) == needle }!
let comment = ReviewComment(id: UUID().uuidString.lowercased(), snapshotId: content.snapshotId, kind: .comment, author: "Rita",
                            text: "Maybe \"eddies\"?", start: content.anchors.cursor(at: at, side: .before),
                            end: content.anchors.cursor(at: at + needle.count - 1, side: .after), quote: words,
                            createdAt: Int64(Date().timeIntervalSince1970 * 1000))
let ownerPublicKey = try P256.KeyAgreement.PublicKey(x963Representation: Data(base64Encoded: content.commentKey)!)
let file = ReviewCommentFile(snapshotId: content.snapshotId, items: [try CommentSealing.seal(comment, to: ownerPublicKey)])
let sent = file.encoded()   // what "Download comments" saves as .imprint-comments

// The owner keeps writing, then imports: the comment lands on the same words.
try owner.insert("Grey and patient, ", at: 13)
let received = try ReviewCommentFile.decode(sent)
let opened = try received.items.map { try CommentSealing.open($0, snapshotId: received.snapshotId, with: commentKey) }
let result = try CommentImport.merge(opened, into: owner)
for c in try DocumentComment.all(in: owner.document, body: owner.body) {
    print("imported \(result.added): \(c.author) on \"\(c.coveredText ?? "")\": \(c.text)")
}
