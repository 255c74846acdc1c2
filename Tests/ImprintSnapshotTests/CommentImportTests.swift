import Crypto
import Foundation
import ImprintBundle
import ImprintCRDT
import ImprintSnapshot
import ImprintStore
import ImprintTestSupport
import Testing

/// What the viewer does for a selection of `quote` in the snapshot's body, in Swift.
func reviewerComment(on quote: String, in content: ReviewContent, text: String, author: String = "Rita",
                     id: String = UUID().uuidString.lowercased()) throws -> ReviewComment {
    let scalars = Array(content.body.unicodeScalars)
    let needle = Array(quote.unicodeScalars)
    let start = try #require((0...(scalars.count - needle.count)).first { Array(scalars[$0..<($0 + needle.count)]) == needle })
    return ReviewComment(id: id, snapshotId: content.snapshotId, kind: .comment, author: author, text: text,
                         start: content.anchors.cursor(at: start, side: .before),
                         end: content.anchors.cursor(at: start + needle.count - 1, side: .after),
                         quote: quote, createdAt: 1_790_000_000_000)
}

@Suite struct CommentImportTests {
    let ownerKey = P256.KeyAgreement.PrivateKey()

    func export(_ bundle: DocumentBundle) throws -> ReviewContent {
        try ReviewExport.export(bundle, options: .init(password: "correct horse battery", commentKey: ownerKey.publicKey)).content
    }

    /// Comments stay on their words through concurrent edits before, inside and after their
    /// ranges, made on two devices after the export.
    @Test func anchorsSurviveConcurrentEditsOnTwoDevices() throws {
        let dir = TemporaryDirectory("comments-anchor")
        let laptop = try reviewBundle(dir, "Alpha beta gamma delta epsilon zeta eta theta.")
        let content = try export(laptop)
        let comments = [
            try reviewerComment(on: "beta gamma", in: content, text: "c1"),
            try reviewerComment(on: "epsilon", in: content, text: "c2"),
            try reviewerComment(on: "theta", in: content, text: "c3"),
        ]
        let file = ReviewCommentFile(snapshotId: content.snapshotId, items: try comments.map { try CommentSealing.seal($0, to: ownerKey.publicKey) })

        // After the export: the phone edits before and inside, the laptop after, concurrently.
        let phone = try DocumentBundle.open(at: dir.file("doc.imprint"), device: try DeviceID("phone"))
        try phone.insert("Preface. ", at: 0)                          // before everything
        try phone.insert("-and-", at: 9 + 10)                          // inside "beta gamma" (after "beta")
        try laptop.insert("really ", at: 23)                          // just before "epsilon"
        try laptop.delete(at: 38, count: 5)                            // "zeta " just after it
        let owner = try DocumentBundle.open(at: dir.file("doc.imprint"), device: try DeviceID("laptop"))
        #expect(try owner.text() == "Preface. Alpha beta-and- gamma delta really epsilon eta theta.")

        let decoded = try ReviewCommentFile.decode(file.encoded())
        let opened = try decoded.items.map { try CommentSealing.open($0, snapshotId: decoded.snapshotId, with: ownerKey) }
        let result = try CommentImport.merge(opened, into: owner)
        #expect(result.added == 3)
        let listed = try DocumentComment.all(in: owner.document, body: owner.body)
        #expect(Dictionary(uniqueKeysWithValues: listed.map { ($0.text, $0.coveredText) })
                == ["c1": "beta-and- gamma", "c2": "epsilon", "c3": "theta"])
        #expect(listed.allSatisfy { $0.anchoring == .cursors })

        // Importing again, from the same file: nothing new. Reopened: the comments are content.
        #expect(try CommentImport.merge(opened, into: owner).duplicates == 3)
        let reopened = try DocumentBundle.open(at: dir.file("doc.imprint"), device: try DeviceID("phone"))
        #expect(try DocumentComment.all(in: reopened.document, body: reopened.body).count == 3)
    }

    @Test func deletedWordsFallBackToTheQuoteThenDetach() throws {
        let dir = TemporaryDirectory("comments-quote")
        let bundle = try reviewBundle(dir, "one two three two")
        let content = try export(bundle)
        let comment = try reviewerComment(on: "three", in: content, text: "gone?")
        try bundle.delete(at: 8, count: 5)              // "three" deleted...
        try bundle.insert("three", at: 0)               // ...and typed anew elsewhere
        try CommentImport.merge([comment], into: bundle)
        var listed = try DocumentComment.all(in: bundle.document, body: bundle.body)
        #expect(listed.first?.anchoring == .quote)
        #expect(listed.first?.range == 0..<5)
        try bundle.delete(at: 0, count: 5)
        listed = try DocumentComment.all(in: bundle.document, body: bundle.body)
        #expect(listed.first?.anchoring == .detached)
        #expect(listed.first?.quote == "three")
    }

    @Test func repliesAndResolvesApplyOnce() throws {
        let dir = TemporaryDirectory("comments-reply")
        let bundle = try reviewBundle(dir, "a sentence to discuss")
        let content = try export(bundle)
        let root = try reviewerComment(on: "sentence", in: content, text: "why?", id: "c-1")
        let reply = ReviewComment(id: "c-2", snapshotId: content.snapshotId, kind: .reply, author: "Sam", text: "because", target: "c-1", createdAt: 2)
        let resolve = ReviewComment(id: "c-3", snapshotId: content.snapshotId, kind: .resolve, author: "Sam", text: "", target: "c-1", createdAt: 3)
        // Out of order in the file: the import orders comments, replies, resolves.
        let result = try CommentImport.merge([resolve, reply, root], into: bundle)
        #expect(result.added == 2 && result.resolved == 1 && result.unknownTargets == 0)
        #expect(try CommentImport.merge([resolve], into: bundle).resolved == 0)
        let listed = try DocumentComment.all(in: bundle.document, body: bundle.body)
        #expect(listed.first { $0.id == "c-1" }?.resolved == true)
        #expect(listed.first { $0.id == "c-2" }?.target == "c-1")
    }

    /// Only the owner's key opens a comment; a comment cannot be moved to another snapshot (the
    /// snapshot id is both the HKDF salt and the associated data); hostile
    /// files and comments are refused with typed errors.
    @Test func sealedCommentsRefuseTheWrongKeySnapshotAndHostileBytes() throws {
        let snapshotId = ReviewExport.newSnapshotId()
        let comment = ReviewComment(id: "x1", snapshotId: snapshotId, kind: .comment, author: "R", text: "t",
                                    start: "before:3@00ff", end: "after:4@00ff", quote: "q", createdAt: 1)
        let sealed = try CommentSealing.seal(comment, to: ownerKey.publicKey)
        #expect(try CommentSealing.open(sealed, snapshotId: snapshotId, with: ownerKey) == comment)
        #expect(errorCode { try CommentSealing.open(sealed, snapshotId: snapshotId, with: P256.KeyAgreement.PrivateKey()) } == .decryptionFailed)
        #expect(errorCode { try CommentSealing.open(sealed, snapshotId: ReviewExport.newSnapshotId(), with: ownerKey) } == .decryptionFailed)
        var wrongInside = comment
        wrongInside.snapshotId = ReviewExport.newSnapshotId()
        #expect(errorCode { try CommentSealing.open(try CommentSealing.seal(wrongInside, to: ownerKey.publicKey), snapshotId: snapshotId, with: ownerKey) } == .decryptionFailed)
        for bad in [
            ReviewComment(id: "bad id!", snapshotId: snapshotId, kind: .reply, author: "", text: "t", target: "x", createdAt: 1),
            ReviewComment(id: "x2", snapshotId: snapshotId, kind: .comment, author: "", text: "t", start: "nonsense", end: "end", createdAt: 1),
            ReviewComment(id: "x3", snapshotId: snapshotId, kind: .reply, author: String(repeating: "a", count: 300), text: "t", target: "x", createdAt: 1),
            ReviewComment(id: "x4", snapshotId: snapshotId, kind: .resolve, author: "", text: "", createdAt: 1),
        ] {
            #expect(errorCode { try CommentSealing.open(try CommentSealing.seal(bad, to: self.ownerKey.publicKey), snapshotId: snapshotId, with: self.ownerKey) } == .invalidComment, "\(bad.id)")
        }

        let seed = testSeed("CommentImportTests.hostile", fallback: 0xC033)
        var rng = SplitMix64(seed: seed)
        let good = ReviewCommentFile(snapshotId: snapshotId, items: [sealed]).encoded()
        for round in 0..<300 {
            var bytes = good
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                switch rng.next() % 3 {
                case 0: bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes.removeLast(Int(rng.next() % UInt64(min(40, bytes.count))))
                default: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: Int(rng.next() % UInt64(bytes.count)))
                }
            }
            // Every failure is typed (a mutation that kept the JSON's meaning may still open).
            let outcome = Result { () throws -> Int in
                let file = try ReviewCommentFile.decode(bytes)
                for item in file.items { _ = try CommentSealing.open(item, snapshotId: file.snapshotId, with: ownerKey) }
                return file.items.count
            }
            if case .failure(let error) = outcome, !(error is ReviewSnapshotError) {
                Issue.record("round \(round): untyped error \(error), seed \(seed)")
            }
        }
        #expect(errorCode { try ReviewCommentFile.decode(Array(repeating: 0x20, count: ReviewCommentFile.maxFileBytes + 1)) } == .tooLarge)
    }
}
