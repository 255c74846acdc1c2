import Testing
@testable import ImprintCRDT

/// A loaded document keeps its history as flat tables until something needs the changes;
/// everything that reads history must see exactly what a fully decoded document has.
@Suite struct LoadedHistoryTests {
    /// Three actors, concurrent branches, messages on some changes, map ops, removes.
    private func sample() throws -> (Document, ObjectID) {
        let a = Document(actor: .named("a"))
        let t = try a.change(message: "create", time: 1) { tx -> ObjectID in
            try tx.put(.root, "title", "draft")
            return try tx.put(.root, "t", .text)!
        }
        a.coalescesLocalChanges = false
        let b = try a.fork()
        b.setActor(.named("b"))
        let c = try a.fork()
        c.setActor(.named("c"))
        for i in 0..<20 {
            try a.change(time: Int64(10 + i)) { try $0.splice(t, at: 0, insert: "a\(i) ") }
            try b.change(message: i % 3 == 0 ? "b \(i)" : nil, time: Int64(10 + i)) { tx in
                try tx.splice(t, at: 0, insert: "b\(i) ")
                if i % 4 == 3 { try tx.splice(t, at: 1, delete: 2) }
            }
            try c.change(time: Int64(10 + i)) { try $0.put(.root, "n", .scalar(.int(Int64(i)))) }
        }
        try a.merge(b)
        try a.merge(c)
        try a.change(message: "tidy", time: 99) { try $0.splice(t, at: 2, delete: 3) }
        return (a, t)
    }

    @Test func historyReadAfterLoadMatchesTheOriginal() throws {
        let (original, t) = try sample()
        let saved = original.save()
        let loaded = try Document.load(saved)
        #expect(loaded.loadedHistory != nil, "load keeps the history flat")
        #expect(try loaded.text(t) == original.text(t))
        #expect(loaded.loadedHistory != nil, "reading the state does not build change records")
        #expect(loaded.currentHeads == original.currentHeads)
        #expect(loaded.loadedHistory == nil)
        let mine = loaded.allChanges()
        let theirs = original.allChanges()
        #expect(mine.map(\.hash) == theirs.map(\.hash))
        #expect(mine.map(\.message) == theirs.map(\.message))
        #expect(mine.map(\.deps) == theirs.map(\.deps))
        // Saved again (its actor table also names the loader's own actor, so compare changes).
        let again = try Document.load(loaded.save())
        #expect(again.allChanges().map(\.hash) == theirs.map(\.hash))
        #expect(try again.text(t) == original.text(t))
    }

    @Test func everyEntryPointWorksOnAFreshlyLoadedDocument() throws {
        let (original, t) = try sample()
        let saved = original.save()
        // Local edit straight after load: the new change follows the loaded ones.
        let edited = try Document.load(saved, actor: .named("a"))
        try edited.change(time: 100) { try $0.splice(t, at: 0, insert: "!") }
        let last = try #require(edited.lastLocalChange)
        #expect(last.deps == original.currentHeads)
        #expect(last.seq == original.allChanges().filter { $0.actor == .named("a") }.count + 1)
        // Changes since some heads, straight after load.
        let since = try Document.load(saved).changes(since: [])
        #expect(since.count == original.allChanges().count)
        // Incremental save, fork, merge into a non-empty document, merge into an empty one.
        let incremental = try Document.load(saved)
        #expect(incremental.saveIncremental().count > 0)
        let fork = try Document.load(saved).fork(at: original.currentHeads)
        #expect(try fork.text(t) == original.text(t))
        let other = Document(actor: .named("z"))
        try other.change(time: 0) { try $0.put(.root, "z", "1") }
        try other.merge(saved)
        #expect(try other.text(t) == original.text(t))
        let empty = Document(actor: .named("e"))
        try empty.merge(saved)
        #expect(empty.loadedHistory != nil, "merging into an empty document adopts the flat history")
        #expect(empty.currentHeads == original.currentHeads)
        // Sync from a freshly loaded document.
        let peer = Document(actor: .named("p"))
        var s1 = SyncState()
        var s2 = SyncState()
        let source = try Document.load(saved)
        _ = try syncRounds(source, &s1, peer, &s2)
        #expect(peer.currentHeads == original.currentHeads)
    }
}
