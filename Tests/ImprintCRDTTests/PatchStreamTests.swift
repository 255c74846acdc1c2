import Foundation
@testable import ImprintCRDT
import ImprintTestSupport
import Testing

/// `Document.patches()`: a view fed only by the stream stays equal to the document through
/// local edits, remote changes, merges, undo and redo; nothing is built while nobody listens.
@Suite struct PatchStreamTests {
    /// Reads batches until one carries the sentinel put of `tick`, applying each to `model`.
    static func drain(_ iterator: inout AsyncStream<PatchBatch>.Iterator, into model: PatchModel, tick: Int64,
                      origins: inout [PatchBatch.Origin]) async throws {
        while let batch = await iterator.next() {
            for patch in batch.patches { try model.apply(patch) }
            origins.append(batch.origin)
            if batch.patches.contains(.put(obj: .root, key: .key("tick"), value: .scalar(.int(tick)))) { return }
        }
        Issue.record("the stream ended")
    }

    @Test func aViewFedByTheStreamMatchesTheDocument() async throws {
        let seed = testSeed("PatchStreamTests.random", fallback: 0x9A7C_4E5)
        var rng = SplitMix64(seed: seed)
        let a = Document(), b = Document()
        let (text, list, meta) = try a.change { tx in
            (try tx.put(.root, "text", .object(.text))!, try tx.put(.root, "list", .object(.list))!, try tx.put(.root, "meta", .object(.map))!)
        }
        try a.change { tx in try tx.put(meta, "count", .scalar(.counter(0))) }
        // Undoing the setup would delete the counter the edits increment (seeds 31 and 39
        // undid it first and then failed with noSuchPath): the steps undo only their own edits.
        a.undoLog.removeAll()
        try b.merge(a)
        var stream = a.patches().makeAsyncIterator()
        let model = try PatchModel(a, at: a.currentHeads)
        var origins: [PatchBatch.Origin] = []
        func edit(_ doc: Document) throws {
            try doc.change { tx in
                switch Int.random(in: 0..<7, using: &rng) {
                case 0, 1:
                    let length = try doc.length(text)
                    let at = Int.random(in: 0...length, using: &rng)
                    let remove = Int.random(in: 0...min(3, length - at), using: &rng)
                    try tx.splice(text, at: at, delete: remove, insert: String("xyé🙂".randomElement(using: &rng)!))
                case 2:
                    try tx.insert(list, at: Int.random(in: 0...(try doc.length(list)), using: &rng), .scalar(.int(Int64.random(in: 0...99, using: &rng))))
                case 3:
                    let length = try doc.length(list)
                    if length > 0 { try tx.delete(list, at: Int.random(in: 0..<length, using: &rng)) }
                case 4:
                    try tx.put(meta, "k\(Int.random(in: 0..<4, using: &rng))", .scalar(.string("v\(Int.random(in: 0...9, using: &rng))")))
                case 5:
                    try tx.delete(meta, "k\(Int.random(in: 0..<4, using: &rng))")
                default:
                    try tx.increment(meta, "count", by: Int64.random(in: -3...3, using: &rng))
                }
            }
        }
        for step in 0..<150 {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...4: try edit(a)
            case 5, 6:
                try edit(b)
                try a.apply(b.changes(since: []))
            case 7:
                try edit(b)
                try a.merge(b)
            case 8: _ = try a.undo()
            default: _ = try a.redo()
            }
            if Int.random(in: 0..<4, using: &rng) == 0 { try b.merge(a) }
            try a.change { tx in try tx.put(.root, "tick", .scalar(.int(Int64(step)))) }
            try await Self.drain(&stream, into: model, tick: Int64(step), origins: &origins)
            let expected = try a.jsonValue()
            #expect(model.json() == expected, "step \(step), seed \(seed): \(model.json()) vs \(expected)")
            if model.json() != (try a.jsonValue()) { return }
        }
        #expect(Set(origins) == [.local, .remote, .undo], "seed \(seed)")
    }

    @Test func aMergeIntoAnEmptyDocumentIsOneBatchAndStoppedStreamsCostNothing() async throws {
        let source = Document()
        try source.change { tx in
            let body = try tx.put(.root, "body", .object(.text))!
            try tx.splice(body, at: 0, insert: "hello")
        }
        let empty = Document()
        var stream = empty.patches().makeAsyncIterator()
        try empty.merge(source)
        let batch = try #require(await stream.next())
        #expect(batch.origin == .remote)
        let model = try PatchModel(Document(), at: [])
        for patch in batch.patches { try model.apply(patch) }
        #expect(model.json() == (try empty.jsonValue()))

        // Nobody listening: no patch is built.
        let quiet = Document()
        try quiet.change { tx in try tx.put(.root, "a", .scalar(.int(1))) }
        #expect(!quiet.patchesWanted && quiet.localPatches.isEmpty)
        // A consumer that is gone: the next change notices, later ones build nothing.
        do {
            let dropped = quiet.patches()
            _ = dropped
        }
        try quiet.change { tx in try tx.put(.root, "b", .scalar(.int(2))) }
        #expect(!quiet.patchesWanted)
    }

    /// Remote typing (text inserts and removals, no marks) is published op by op, not as a
    /// diff of the whole document, and a view fed by it stays equal to the document through
    /// concurrent edits of three replicas, overlapping removals and multi-byte characters.
    @Test(.timeLimit(.minutes(2))) func remoteTypingIsPatchedOpByOp() async throws {
        let seed = testSeed("PatchStreamTests.typing", fallback: 0x51DE_7E17)
        var rng = SplitMix64(seed: seed)
        // Actors from the seed too: their order decides where concurrent inserts land, so
        // random ones would make a run depend on more than its seed.
        func actor() -> ActorID { ActorID(bytes: (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) })! }
        let a = Document(actor: actor())
        let body = try a.change { tx in try tx.put(.root, "body", .object(.text))! }
        try a.change { tx in try tx.splice(body, at: 0, insert: "The quick brown fox") }
        let b = try Document.load(a.save(), actor: actor()), c = try Document.load(a.save(), actor: actor())
        var stream = a.patches().makeAsyncIterator()
        let model = try PatchModel(a, at: a.currentHeads)
        func type(_ doc: Document) throws {
            try doc.change { tx in
                let length = try doc.length(body)
                let at = Int.random(in: 0...length, using: &rng)
                let remove = Int.random(in: 0...min(4, length - at), using: &rng)
                let insert = String((0..<Int.random(in: 0...3, using: &rng)).map { _ in "abé🙂 ".randomElement(using: &rng)! })
                try tx.splice(body, at: at, delete: remove, insert: insert)
            }
        }
        var origins: [PatchBatch.Origin] = []
        for step in 0..<120 {
            try type(b)
            try type(c)
            if Int.random(in: 0..<3, using: &rng) == 0 { try b.merge(c) }
            let known = a.currentHeads
            for source in [b, c] where Bool.random(using: &rng) || step % 5 == 0 {
                try a.apply(source.changes(since: known))
            }
            // A batch whose changes show nothing (a removal of text already removed) is not
            // published, so the stream is read up to a local sentinel, never waited on blindly.
            try a.change { tx in try tx.put(.root, "tick", .scalar(.int(Int64(step)))) }
            try await Self.drain(&stream, into: model, tick: Int64(step), origins: &origins)
            #expect(model.json() == (try a.jsonValue()), "step \(step), seed \(seed)")
            if model.json() != (try a.jsonValue()) { return }
        }
        #expect(origins.filter { $0 == .remote }.count > 50, "seed \(seed)")
        #expect(a.remoteBatchesDiffed == 0, "every batch was built op by op (seed \(seed))")
    }
}
