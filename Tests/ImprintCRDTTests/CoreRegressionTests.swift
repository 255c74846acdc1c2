import Testing
@testable import ImprintCRDT

/// Core bugs found while building sync and history; each test failed before its fix.
@Suite struct CoreRegressionTests {
    /// `currentHeads` trapped: applying a concurrent remote change ended the open local
    /// change without sealing it, and it stayed a head with no hash.
    @Test func headsAfterLocalChangeAndConcurrentRemoteChange() throws {
        let a = Document(actor: .named("a")), b = Document(actor: .named("b"))
        try a.change(time: 0) { try $0.put(.root, "x", 1) }
        try b.change(time: 0) { try $0.put(.root, "y", 2) }
        try a.apply(b.allChanges())
        #expect(a.currentHeads.count == 2)
        try b.apply(a.allChanges())
        #expect(a.currentHeads == b.currentHeads)
    }

    /// `load` emptied every nested object: replaying the map op that created an object
    /// replaced the object the saved spans had just filled.
    @Test func loadKeepsNestedObjectContents() throws {
        let d = Document(actor: .named("d"))
        try d.change(time: 0) { tx in
            let t = try tx.put(.root, "t", .text)!
            try tx.splice(t, at: 0, insert: "héllo")
            let l = try tx.put(.root, "l", .list)!
            try tx.insert(l, at: 0, 1)
            let m = try tx.insert(l, at: 1, .map)!
            try tx.put(m, "k", "v")
        }
        let loaded = try Document.load(d.save())
        #expect(try loaded.jsonValue() == d.jsonValue())
        #expect(loaded.allChanges().map(\.hash) == d.allChanges().map(\.hash))
    }

    /// Undoing typed text published no patch: the undo deleted the items without noting a
    /// `.remove`, so a view fed by `patches()` kept the text. Found by `MarkTests`.
    @Test func undoOfTypingIsPublished() async throws {
        let d = Document(actor: .named("d"))
        let t = try d.change { try $0.put(.root, "t", .text)! }
        var stream = d.patches().makeAsyncIterator()
        try d.change { tx in try tx.splice(t, at: 0, insert: "hi") }
        #expect(try d.undo())
        #expect(await stream.next()?.patches == [.splice(obj: t, index: 0, text: "hi")])
        let undo = await stream.next()
        #expect(undo?.origin == .undo)
        #expect(undo?.patches == [.remove(obj: t, index: 1, count: 1), .remove(obj: t, index: 0, count: 1)])
    }

    /// `merge(_ other: Document)` into an empty document adopted `other`'s live objects: the
    /// two documents shared mutable state, so each one's edits leaked into the other, then
    /// arrived again as changes (a counter incremented twice, an item inserted twice, a save
    /// that no longer loaded). Found by `PatchStreamTests`.
    @Test func mergeIntoAnEmptyDocumentSharesNothing() throws {
        let a = Document(actor: .named("a"))
        let (counters, list) = try a.change { tx in
            (try tx.put(.root, "counters", .map)!, try tx.put(.root, "list", .list)!)
        }
        try a.change { tx in try tx.put(counters, "n", .scalar(.counter(0))) }
        let b = Document(actor: .named("b"))
        try b.merge(a)
        try b.change { tx in
            try tx.increment(counters, "n", by: 1)
            try tx.insert(list, at: 0, 7)
        }
        #expect(try a.jsonValue() == Document.load(a.save()).jsonValue(), "a untouched by b's edits")
        #expect(try a.get(counters, "n") == .scalar(.counter(0)))
        try a.apply(b.allChanges())
        #expect(try a.get(counters, "n") == .scalar(.counter(1)))
        #expect(try a.length(list) == 1)
        #expect(try Document.load(a.save()).jsonValue() == a.jsonValue())
    }
}
