import Testing
@testable import ImprintCRDT
import ImprintTestSupport

/// Undo and redo beyond one replica's own linear history: what `canUndo`/`canRedo` say,
/// `undoLimit`, and undo while other replicas edit concurrently (undo inverts only this
/// replica's changes, and every replica converges on the result).
@Suite struct UndoTests {
    @Test func canUndoAndCanRedoFollowTheStacks() throws {
        let doc = Document(actor: ActorID.named("a"))
        #expect(!doc.canUndo && !doc.canRedo)
        #expect(try !doc.undo())
        #expect(try !doc.redo())
        let t = try doc.change { tx in try tx.put(.root, "t", .text)! }
        #expect(doc.canUndo && !doc.canRedo)
        try doc.change { tx in try tx.splice(t, at: 0, insert: "abc") }
        #expect(try doc.undo())
        #expect(doc.canUndo && doc.canRedo)
        #expect(try doc.text(t) == "")
        #expect(try doc.redo())
        #expect(try doc.text(t) == "abc")
        #expect(!doc.canRedo)
        // A new local edit after an undo drops what could have been redone.
        #expect(try doc.undo())
        try doc.change { tx in try tx.splice(t, at: 0, insert: "x") }
        #expect(!doc.canRedo)
        #expect(try !doc.redo())
        #expect(try doc.text(t) == "x")
        // Remote changes are not this replica's to undo.
        let other = Document(actor: ActorID.named("b"))
        try other.apply(doc.allChanges())
        #expect(!other.canUndo)
    }

    @Test(arguments: [1, 3, 10])
    func undoGoesBackAtMostUndoLimitTransactions(limit: Int) throws {
        let doc = Document(actor: ActorID.named("a"))
        let t = try doc.change { tx in try tx.put(.root, "t", .text)! }
        doc.undoLimit = limit
        for i in 0..<(limit + 20) {
            try doc.change { tx in try tx.splice(t, at: try doc.length(t), insert: String(i % 10)) }
        }
        var undone = 0
        while try doc.undo() { undone += 1 }
        #expect(undone == limit, "undoLimit \(limit): \(undone) undos")
        #expect(!doc.canUndo)
        // The oldest transactions stay: only the last `limit` characters went away.
        #expect(try doc.length(t) == 20)
    }

    /// Past the limit, forgotten transactions are dropped from the undo log in batches (once
    /// they outnumber the kept ones, and at least 64): undo still goes back exactly
    /// `undoLimit` transactions, each with all of its steps, and redo forward. With a limit of
    /// 10, a batch is dropped at the 75th transaction and every 65th after it (the first is
    /// the text's creation): 74 and 139 edits end on a drop, 300 between two.
    @Test(arguments: [74, 139, 300])
    func undoAndRedoAfterForgottenTransactionsWereDropped(edits: Int) throws {
        let doc = Document(actor: ActorID.named("a"))
        let t = try doc.change { tx in try tx.put(.root, "t", .text)! }
        doc.undoLimit = 10
        var texts: [String] = []
        for i in 0..<edits {
            try doc.change { tx in
                // Two steps from the second transaction on: a deletion, then an insertion.
                let length = try doc.length(t)
                if length > 0 { try tx.splice(t, at: length - 1, delete: 1) }
                try tx.splice(t, at: try doc.length(t), insert: "\(i % 10)\(i % 7)")
            }
            texts.append(try doc.text(t))
        }
        for k in 1...10 {
            #expect(try doc.undo())
            #expect(try doc.text(t) == texts[texts.count - 1 - k], "undo \(k)")
        }
        #expect(!doc.canUndo)
        for k in stride(from: 9, through: 0, by: -1) {
            #expect(try doc.redo())
            #expect(try doc.text(t) == texts[texts.count - 1 - k], "redo to \(k)")
        }
        #expect(!doc.canRedo)
    }

    /// Two replicas type; one undoes its last edit while the other's concurrent edits are
    /// in flight. The undo removes only its own text, and after syncing both agree.
    @Test func undoWithConcurrentRemoteEditsConverges() throws {
        let a = Document(actor: ActorID.named("a")), b = Document(actor: ActorID.named("b"))
        let t = try a.change { tx in try tx.put(.root, "t", .text)! }
        try a.change { tx in try tx.splice(t, at: 0, insert: "hello world") }
        try b.apply(a.allChanges())
        try a.change { tx in try tx.splice(t, at: 5, insert: " dear") }      // a: "hello dear world"
        try b.change { tx in try tx.splice(t, at: 11, insert: "!") }           // b: "hello world!"
        try b.change { tx in try tx.splice(t, at: 0, delete: 1, insert: "H") } // b: "Hello world!"
        try a.apply(b.changes(since: a.currentHeads))
        #expect(try a.text(t) == "Hello dear world!")
        #expect(try a.undo())                                                  // a's " dear" goes
        #expect(try a.text(t) == "Hello world!")
        try b.apply(a.changes(since: b.currentHeads))
        try a.apply(b.changes(since: a.currentHeads))
        #expect(try a.text(t) == "Hello world!" && b.text(t) == "Hello world!")
        // b undoes its capital: the text a typed stays, the "h" comes back.
        #expect(try b.undo())
        try a.apply(b.changes(since: a.currentHeads))
        #expect(try a.text(t) == "hello world!" && b.text(t) == "hello world!")
        // And a redoes " dear" although b edited since.
        #expect(try a.redo())
        try b.apply(a.changes(since: b.currentHeads))
        #expect(try a.text(t) == "hello dear world!" && b.text(t) == "hello dear world!")
    }

    /// Seeded: three replicas edit, undo and redo at random while syncing partially; at the
    /// end every replica holds the same text, and undo never touched another replica's text
    /// (each replica types only its own letter, so an undo may only remove or bring back its own).
    @Test func randomUndoRedoOnThreeReplicasConverges() throws {
        let seed = testSeed("UndoTests.randomUndoRedoOnThreeReplicasConverges", fallback: 0x0DD0_2026)
        var rng = SplitMix64(seed: seed)
        let letters: [Character] = ["a", "b", "c"]
        let replicas = letters.map { Document(actor: ActorID.named(String($0))) }
        let t = try replicas[0].change { tx in try tx.put(.root, "t", .text)! }
        for r in replicas.dropFirst() { try r.apply(replicas[0].allChanges()) }
        for r in replicas { r.coalescesLocalChanges = false }
        for _ in 0..<200 {
            let i = Int.random(in: 0..<3, using: &rng)
            let r = replicas[i]
            let before = try r.text(t)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5:
                try r.change { tx in try tx.splice(t, at: Int.random(in: 0...(try r.length(t)), using: &rng), insert: String(letters[i])) }
            case 5..<7:
                try r.undo()
            case 7:
                try r.redo()
            default:
                let j = Int.random(in: 0..<3, using: &rng)
                try replicas[j].apply(r.changes(since: replicas[j].currentHeads))
            }
            // Whatever this replica did locally changed only its own letter.
            let after = try r.text(t)
            let othersBefore = before.filter { $0 != letters[i] }, othersAfter = after.filter { $0 != letters[i] }
            if othersBefore != othersAfter {
                Issue.record("seed \(seed): replica \(letters[i]) changed others' text: \(before) → \(after)")
            }
        }
        for a in replicas { for b in replicas where a !== b { try b.apply(a.changes(since: b.currentHeads)) } }
        let texts = try replicas.map { try $0.text(t) }
        #expect(Set(texts).count == 1, "seed \(seed): \(texts)")
    }
}
