import Testing
@testable import ImprintCRDT
import ImprintTestSupport

@Suite struct HistoryTests {
    @Test func forkKeepsOnlyTheAncestryAndIsIndependent() throws {
        let d = Document(actor: .named("d"))
        let t = try d.change(message: "create", time: 0) { try $0.put(.root, "t", .text)! }
        try d.change(message: "one", time: 0) { try $0.splice(t, at: 0, insert: "one") }
        let v1 = d.currentHeads
        try d.change(message: "two", time: 0) { try $0.splice(t, at: 3, insert: " two") }
        let f = try d.fork(at: v1)
        #expect(try f.text(t) == "one")
        #expect(f.currentHeads == v1)
        #expect(f.allChanges().count == 2)
        try f.change(time: 0) { try $0.splice(t, at: 0, insert: ">") }
        #expect(try d.text(t) == "one two")
        try d.apply(f.allChanges())
        #expect(try d.text(t) == ">one two")
        let all = try d.fork()
        #expect(all.currentHeads == d.currentHeads)
        #expect(try all.jsonValue() == d.jsonValue())
        let bogus = ChangeHash(bytes: [UInt8](repeating: 7, count: 32))!
        #expect { try d.fork(at: [bogus]) } throws: { ($0 as? CRDTError)?.code == .unknownHeads }
        #expect { try d.text(t, at: [bogus]) } throws: { ($0 as? CRDTError)?.code == .unknownHeads }
    }

    @Test func readsAtHeads() throws {
        let d = Document(actor: .named("d"))
        let t = try d.change(message: "a", time: 0) { tx -> ObjectID in
            try tx.put(.root, "title", "draft")
            return try tx.put(.root, "t", .text)!
        }
        let empty: [ChangeHash] = []
        let v1 = d.currentHeads
        try d.change(message: "b", time: 0) { tx in
            try tx.put(.root, "title", "final")
            try tx.splice(t, at: 0, insert: "body")
        }
        let v2 = d.currentHeads
        #expect(try d.get(.root, "title", at: v1) == .scalar(.string("draft")))
        #expect(try d.get(.root, "title", at: v2) == .scalar(.string("final")))
        #expect(try d.text(t, at: v1) == "")
        #expect(try d.text(t, at: v2) == "body")
        #expect(try d.keys(.root, at: empty) == [])
        #expect(try d.length(t, at: v2) == 4)
        #expect(try d.jsonValue(at: v1) == .object(["title": .string("draft"), "t": .string("")]))
        #expect { try d.text(t, at: empty) } throws: { ($0 as? CRDTError)?.code == .noSuchObject }
        // Views are cached by heads and do not see later edits.
        let cached = try d.view(at: v1)
        #expect(try d.view(at: v1) === cached)
        #expect(try d.view(at: d.currentHeads) === d)
        // Heads are reduced to the version they name: an ancestor added to them changes nothing.
        #expect(try d.view(at: v1 + d.currentHeads) === d)
        #expect(try d.frontier(v2 + v1 + v2) == v2)
    }

    @Test func textDiffIsIDBased() throws {
        let d = Document(actor: .named("d"))
        let t = try d.change(message: "a", time: 0) { tx -> ObjectID in
            let t = try tx.put(.root, "t", .text)!
            try tx.splice(t, at: 0, insert: "hello")
            return t
        }
        let v1 = d.currentHeads
        try d.change(message: "b", time: 0) { tx in
            try tx.splice(t, at: 1, delete: 1, insert: "X")
            try tx.splice(t, at: 5, insert: "!")
        }
        let v2 = d.currentHeads
        // A local insert attaches to the visible item before it, so "X" sits before the tombstone of "e".
        #expect(try d.diff(from: v1, to: v2) == [
            .splice(obj: t, index: 1, text: "X"), .remove(obj: t, index: 2, count: 1), .splice(obj: t, index: 5, text: "!"),
        ])
        #expect(try d.diff(from: v2, to: v1) == [
            .remove(obj: t, index: 1, count: 1), .splice(obj: t, index: 1, text: "e"), .remove(obj: t, index: 5, count: 1),
        ])
        #expect(try d.diff(from: v2, to: v2) == [])
        // Only the text was edited between the versions, so only it is walked.
        #expect(try d.objectsChanged(between: v1, and: v2) == [t])
        #expect(try d.objectsChanged(between: [], and: v1) == [.root, t])
        // Retyping the same characters is an edit: ids differ even though the text is equal.
        try d.change(message: "c", time: 0) { try $0.splice(t, at: 0, delete: 1, insert: "h") }
        #expect(try d.diff(from: v2, to: d.currentHeads) == [.splice(obj: t, index: 0, text: "h"), .remove(obj: t, index: 1, count: 1)])
    }

    @Test func concurrentWritesReportConflicts() throws {
        let a = Document(actor: .named("a")), b = Document(actor: .named("b"))
        try a.change(time: 0) { try $0.put(.root, "k", 1) }
        try b.apply(a.allChanges())
        let base = a.currentHeads
        try a.change(time: 0) { try $0.put(.root, "k", 2) }
        try b.change(time: 0) { try $0.put(.root, "k", 3) }
        try a.apply(b.allChanges())
        let winner = try a.get(.root, "k")!
        let all = try a.conflicts(.root, "k")
        #expect(all.count == 2)
        #expect(try a.diff(from: base, to: a.currentHeads) == [
            .put(obj: .root, key: .key("k"), value: winner), .conflict(obj: .root, key: .key("k"), values: all),
        ])
        let conflicted = a.currentHeads
        try a.change(time: 0) { try $0.put(.root, "k", 4) }
        // Resolving reports the single remaining value.
        #expect(try a.diff(from: conflicted, to: a.currentHeads) == [
            .put(obj: .root, key: .key("k"), value: .scalar(.int(4))), .conflict(obj: .root, key: .key("k"), values: [.scalar(.int(4))]),
        ])
        // Between two unconflicted versions there is nothing to report.
        #expect(try a.diff(from: b.currentHeads, to: a.currentHeads) == [.put(obj: .root, key: .key("k"), value: .scalar(.int(4)))])
    }

    @Test func listElementConflictsAndNestedObjects() throws {
        let a = Document(actor: .named("a")), b = Document(actor: .named("b"))
        let l = try a.change(time: 0) { tx -> ObjectID in
            let l = try tx.put(.root, "l", .list)!
            try tx.insert(l, at: 0, "x")
            try tx.insert(l, at: 1, "y")
            return l
        }
        try b.apply(a.allChanges())
        let base = a.currentHeads
        try a.change(time: 0) { try $0.put(l, at: 1, "from a") }
        let m = try b.change(time: 0) { tx -> ObjectID in
            try tx.put(l, at: 1, "from b")
            let m = try tx.insert(l, at: 0, .map)!
            try tx.put(m, "k", 1)
            return m
        }
        try a.apply(b.allChanges())
        let winner = try a.get(l, at: 2)!
        let loser: Value = winner == .scalar(.string("from a")) ? .scalar(.string("from b")) : .scalar(.string("from a"))
        let patches = try a.diff(from: base, to: a.currentHeads)
        #expect(patches == [
            .insert(obj: l, index: 0, values: [.object(m, .map)]),
            .put(obj: m, key: .key("k"), value: .scalar(.int(1))),
            .put(obj: l, key: .index(2), value: winner),
            .conflict(obj: l, key: .index(2), values: [loser, winner]),
        ])
    }

    // MARK: Random histories

    static func reachable(_ d: Document) throws -> [(ObjectID, ObjectType)] {
        var out: [(ObjectID, ObjectType)] = [(.root, .map)]
        var i = 0
        while i < out.count {
            let (o, t) = out[i]
            i += 1
            switch t {
            case .map:
                for k in try d.keys(o) { if case .object(let c, let ct)? = try d.get(o, k) { out.append((c, ct)) } }
            case .list:
                for j in 0..<(try d.length(o)) { if case .object(let c, let ct)? = try d.get(o, at: j) { out.append((c, ct)) } }
            case .text: break
            }
        }
        return out
    }

    static func randomEdit(_ d: Document, _ rng: inout SplitMix64) throws {
        let objs = try reachable(d)
        let (o, t) = objs[Int.random(in: 0..<objs.count, using: &rng)]
        let keys = ["a", "b", "c", "d", "e"]
        let words = ["x", "yz", "é", "😀", "abc", " "]
        try d.change(time: 0) { tx in
            switch t {
            case .map:
                let k = keys[Int.random(in: 0..<keys.count, using: &rng)]
                switch Int.random(in: 0..<10, using: &rng) {
                case 0 where objs.count < 12: try tx.put(o, k, [.list, .text, .map][Int.random(in: 0..<3, using: &rng)])
                case 1: try tx.delete(o, k)
                case 2: try tx.put(o, k, .scalar(.counter(Int64.random(in: 0..<5, using: &rng))))
                case 3, 4:
                    let counters = try d.keys(o).filter { if case .scalar(.counter)? = try d.get(o, $0) { true } else { false } }
                    if let c = counters.randomElement(using: &rng) { try tx.increment(o, c, by: Int64.random(in: 1...3, using: &rng)) }
                    else { try tx.put(o, k, .scalar(.string(words[Int.random(in: 0..<words.count, using: &rng)]))) }
                default: try tx.put(o, k, .scalar(.int(Int64.random(in: 0..<100, using: &rng))))
                }
            case .list:
                let n = try d.length(o)
                switch Int.random(in: 0..<10, using: &rng) {
                case 0 where objs.count < 12: try tx.insert(o, at: Int.random(in: 0...n, using: &rng), [.text, .map][Int.random(in: 0..<2, using: &rng)])
                case 1 where n > 0, 2 where n > 0:
                    let i = Int.random(in: 0..<n, using: &rng)
                    try tx.delete(o, at: i, count: Int.random(in: 1...min(n - i, 2), using: &rng))
                case 3 where n > 0: try tx.put(o, at: Int.random(in: 0..<n, using: &rng), .scalar(.int(Int64.random(in: 0..<100, using: &rng))))
                case 4: try tx.insert(o, at: Int.random(in: 0...n, using: &rng), .scalar(.counter(1)))
                case 5 where n > 0:
                    let i = Int.random(in: 0..<n, using: &rng)
                    if case .scalar(.counter)? = try d.get(o, at: i) { try tx.increment(o, at: i, by: 2) }
                default: try tx.insert(o, at: Int.random(in: 0...n, using: &rng), .scalar(.int(Int64.random(in: 0..<100, using: &rng))))
                }
            case .text:
                let n = try d.length(o)
                let at = Int.random(in: 0...n, using: &rng)
                let del = n > at && Bool.random(using: &rng) ? Int.random(in: 1...min(3, n - at), using: &rng) : 0
                try tx.splice(o, at: at, delete: del, insert: Bool.random(using: &rng) || del == 0 ? words[Int.random(in: 0..<words.count, using: &rng)] : "")
            }
        }
    }

    /// Three replicas edit and occasionally exchange changes; every version any of them
    /// passed through is recorded. Returns a document holding all of history.
    static func randomHistory(seed: UInt64, steps: Int) throws -> (Document, [[ChangeHash]]) {
        var rng = SplitMix64(seed: seed)
        let replicas = (0..<3).map { Document(actor: .named("r\($0)-\(seed)")) }
        for r in replicas { r.coalescesLocalChanges = false }
        // A common start: a text, a list and a counter that every replica edits.
        try replicas[0].change(time: 0) { tx in
            try tx.put(.root, "text", .text)
            try tx.put(.root, "list", .list)
            try tx.put(.root, "n", .scalar(.counter(0)))
        }
        for r in replicas.dropFirst() { try r.apply(replicas[0].allChanges()) }
        var versions: [[ChangeHash]] = [[]]
        for _ in 0..<steps {
            let r = replicas[Int.random(in: 0..<3, using: &rng)]
            if Int.random(in: 0..<5, using: &rng) == 0 {
                try r.apply(replicas[Int.random(in: 0..<3, using: &rng)].allChanges())
            } else {
                try randomEdit(r, &rng)
            }
            versions.append(r.currentHeads)
        }
        let all = Document(actor: .named("all"))
        for r in replicas { try all.apply(r.allChanges()) }
        versions.append(all.currentHeads)
        return (all, versions)
    }

    @Test func patchesTurnOneVersionIntoAnother() throws {
        var kinds: [String: Int] = [:]
        for seed: UInt64 in 1...12 {
            var rng = SplitMix64(seed: seed &+ 1000)
            let (built, versions) = try Self.randomHistory(seed: seed, steps: 60)
            // Half the runs read history from a saved and reloaded copy.
            let doc = seed % 2 == 0 ? try Document.load(built.save()) : built
            var pairs: [([ChangeHash], [ChangeHash])] = [([], versions.last!)]
            for _ in 0..<12 {
                let x = versions[Int.random(in: 0..<versions.count, using: &rng)]
                let y = versions[Int.random(in: 0..<versions.count, using: &rng)]
                pairs.append((x, y))
                pairs.append((x, x + y))  // forward to the merge of both
            }
            for (x, y) in pairs {
                let model = try PatchModel(doc, at: x)
                let patches = try doc.diff(from: x, to: y)
                for p in patches {
                    kinds[String("\(p)".prefix { $0 != "(" }), default: 0] += 1
                    do { try model.apply(p) } catch {
                        Issue.record("patch \(p) does not fit, seed \(seed)")
                        break
                    }
                }
                let expected = try doc.jsonValue(at: y)
                #expect(model.json() == expected, "seed \(seed): \(model.json().serialized) vs \(expected.serialized)")
                let target = try PatchModel(doc, at: y)
                #expect(model.reachableConflicts() == target.reachableConflicts(), "seed \(seed)")
            }
        }
        // The histories exercise every kind of patch.
        for k in ["put", "delete", "insert", "splice", "remove", "increment", "conflict"] {
            #expect(kinds[k, default: 0] > 0, "no \(k) patches in \(kinds)")
        }
    }
}
