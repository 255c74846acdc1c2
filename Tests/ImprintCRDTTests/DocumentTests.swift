import Testing
@testable import ImprintCRDT

@Suite struct DocumentTests {
    @Test func mapPutGetDeleteAndNestedObjects() throws {
        let doc = Document()
        let (list, inner) = try doc.change(message: "setup") { tx in
            try tx.put(.root, "title", "Draft")
            try tx.put(.root, "count", .scalar(.counter(0)))
            let list = try tx.put(.root, "tags", .list)!
            try tx.insert(list, at: 0, "a")
            try tx.insert(list, at: 1, "c")
            try tx.insert(list, at: 1, "b")
            let inner = try tx.put(.root, "meta", .map)!
            try tx.put(inner, "lang", "en")
            return (list, inner)
        }
        #expect(try doc.get(.root, "title")?.string == "Draft")
        #expect(try doc.length(list) == 3)
        #expect(try doc.get(list, at: 1)?.string == "b")
        #expect(try doc.value(at: ["meta", "lang"])?.string == "en")
        #expect(try doc.value(at: ["tags", 2])?.string == "c")
        try doc.change { tx in
            try tx.increment(.root, "count", by: 5)
            try tx.delete(list, at: 0)
            try tx.put(list, at: 0, "B")
            try tx.delete(inner, "lang")
        }
        #expect(try doc.get(.root, "count") == .scalar(.counter(5)))
        #expect(try doc.jsonValue(list) == .array([.string("B"), .string("c")]))
        #expect(try doc.keys(inner).isEmpty)
        #expect(throws: CRDTError.self) { try doc.change { tx in try tx.insert(list, at: 9, "x") } }
        #expect(throws: CRDTError.self) { try doc.text(list) }
    }

    @Test func concurrentPutsKeepEveryValueWithOneWinner() throws {
        let a = Document(actor: ActorID(hex: "aa")!)
        let b = Document(actor: ActorID(hex: "bb")!)
        try a.change { tx in try tx.put(.root, "k", "from a") }
        try b.change { tx in try tx.put(.root, "k", "from b") }
        try a.apply(b.allChanges())
        try b.apply(a.allChanges())
        #expect(try a.get(.root, "k") == b.get(.root, "k"))
        #expect(try a.conflicts(.root, "k").count == 2)
        #expect(try a.get(.root, "k")?.string == "from b")  // same counter: greater actor wins
        try a.change { tx in try tx.put(.root, "k", "resolved") }
        try b.apply(a.allChanges())
        #expect(try b.conflicts(.root, "k") == [.scalar(.string("resolved"))])
    }

    @Test func countersCommute() throws {
        let a = Document(actor: ActorID(hex: "01")!)
        try a.change { tx in try tx.put(.root, "n", .scalar(.counter(10))) }
        let b = Document(actor: ActorID(hex: "02")!)
        try b.apply(a.allChanges())
        try a.change { tx in try tx.increment(.root, "n", by: 3) }
        try b.change { tx in try tx.increment(.root, "n", by: -1) }
        try a.apply(b.allChanges())
        try b.apply(a.allChanges())
        #expect(try a.get(.root, "n") == .scalar(.counter(12)))
        #expect(try b.get(.root, "n") == .scalar(.counter(12)))
    }

    @Test func concurrentTypingDoesNotInterleave() throws {
        let a = Document(actor: ActorID(hex: "0a")!)
        let text = try a.change { tx in try tx.put(.root, "t", .text)! }
        try a.change { tx in try tx.splice(text, at: 0, insert: "[]") }
        let b = Document(actor: ActorID(hex: "0b")!)
        try b.apply(a.allChanges())
        for ch in "hello" { try a.change { tx in try tx.splice(text, at: try a.length(text) - 1, insert: String(ch)) } }
        for ch in "world" { try b.change { tx in try tx.splice(text, at: try b.length(text) - 1, insert: String(ch)) } }
        try a.apply(b.allChanges())
        try b.apply(a.allChanges())
        let merged = try a.text(text)
        #expect(merged == (try b.text(text)))
        #expect(merged == "[helloworld]" || merged == "[worldhello]")
        // Backwards typing (each char at the start of the run) must not interleave either.
        let c = Document(actor: ActorID(hex: "0c")!)
        try c.apply(a.allChanges())
        let d = Document(actor: ActorID(hex: "0d")!)
        try d.apply(a.allChanges())
        for ch in "321" { try c.change { tx in try tx.splice(text, at: 1, insert: String(ch)) } }
        for ch in "cba" { try d.change { tx in try tx.splice(text, at: 1, insert: String(ch)) } }
        try c.apply(d.allChanges())
        let t = try c.text(text)
        #expect(t.hasPrefix("[123abc") || t.hasPrefix("[abc123"))
    }

    @Test func deleteOfNestedObjectVersusConcurrentEdit() throws {
        let a = Document(actor: ActorID(hex: "01")!)
        let inner = try a.change { tx in try tx.put(.root, "m", .map)! }
        let b = Document(actor: ActorID(hex: "02")!)
        try b.apply(a.allChanges())
        try a.change { tx in try tx.delete(.root, "m") }
        try b.change { tx in try tx.put(inner, "x", 1) }
        try a.apply(b.allChanges())
        try b.apply(a.allChanges())
        #expect(try a.get(.root, "m") == nil)
        #expect(try b.get(.root, "m") == nil)
        // A concurrent put to the same key survives a concurrent delete.
        try a.change { tx in try tx.put(.root, "k", 1) }
        try b.apply(a.allChanges())
        try a.change { tx in try tx.delete(.root, "k") }
        try b.change { tx in try tx.put(.root, "k", 2) }
        try a.apply(b.allChanges())
        try b.apply(a.allChanges())
        #expect(try a.get(.root, "k") == .scalar(.int(2)))
        #expect(try b.get(.root, "k") == .scalar(.int(2)))
    }

    @Test func changesWaitForMissingDependencies() throws {
        let a = Document()
        let t = try a.change { tx in try tx.put(.root, "t", .text)! }
        a.coalescesLocalChanges = false
        for i in 0..<5 { try a.change { tx in try tx.splice(t, at: i, insert: "\(i)") } }
        let changes = a.allChanges()
        let b = Document()
        try b.apply(Array(changes.reversed().prefix(3)))
        #expect(b.pendingChangeCount == 3)
        try b.apply(changes + changes)
        #expect(b.pendingChangeCount == 0)
        #expect(try b.text(t) == "01234")
        #expect(b.currentHeads == a.currentHeads)
    }

    @Test func undoAndRedoOwnChanges() throws {
        let doc = Document()
        let t = try doc.change { tx in try tx.put(.root, "t", .text)! }
        try doc.change { tx in try tx.splice(t, at: 0, insert: "hello world") }
        try doc.change { tx in try tx.splice(t, at: 5, delete: 6) }
        try doc.change { tx in try tx.put(.root, "title", "A") }
        try doc.change { tx in try tx.put(.root, "title", "B") }
        #expect(try doc.undo())
        #expect(try doc.get(.root, "title")?.string == "A")
        #expect(try doc.undo())
        #expect(try doc.get(.root, "title") == nil)
        #expect(try doc.undo())
        #expect(try doc.text(t) == "hello world")
        #expect(try doc.redo())
        #expect(try doc.text(t) == "hello")
        #expect(try doc.undo())
        #expect(try doc.undo())
        #expect(try doc.text(t) == "")
        // Undo is a normal change: a replica sees the same result.
        let other = Document()
        try other.apply(doc.allChanges())
        #expect(try other.text(t) == "")
    }

    @Test func incrementalSaveAppendsToFullSave() throws {
        let doc = Document()
        let t = try doc.change { tx in try tx.put(.root, "t", .text)! }
        try doc.change { tx in try tx.splice(t, at: 0, insert: "héllo 🌍") }
        var file = doc.save()
        try doc.change { tx in try tx.splice(t, at: 6, delete: 1, insert: "world") }
        file += doc.saveIncremental()
        try doc.change { tx in try tx.put(.root, "k", true) }
        file += doc.saveIncremental()
        let loaded = try Document.load(file)
        #expect(try loaded.text(t) == "héllo world")
        #expect(try loaded.get(.root, "k") == .scalar(.bool(true)))
        #expect(loaded.currentHeads == doc.currentHeads)
    }
}
