import Foundation
import Testing
@testable import ImprintCRDT
import ImprintTestSupport

@Suite struct CursorTests {
    /// Two replicas of a text holding `initial`.
    func pair(_ initial: String) throws -> (Document, Document, ObjectID) {
        let a = Document(actor: .named("a"))
        let t = try a.change(time: 0) { try $0.put(.root, "t", .text)! }
        try a.change(time: 0) { try $0.splice(t, at: 0, insert: initial) }
        let b = Document(actor: .named("b"))
        try b.apply(a.allChanges())
        return (a, b, t)
    }

    func exchange(_ a: Document, _ b: Document) throws {
        try a.apply(b.allChanges())
        try b.apply(a.allChanges())
    }

    @Test func cursorFollowsItsItemThroughConcurrentEdits() throws {
        let (a, b, t) = try pair("hello world")
        let before = try a.cursor(t, at: 6)  // before "w"
        let after = try a.cursor(t, at: 5, side: .after)  // after "o" of hello
        try a.change(time: 0) { try $0.splice(t, at: 11, insert: "!") }
        try b.change(time: 0) { tx in
            try tx.splice(t, at: 0, insert: ">> ")
            try tx.splice(t, at: 3, delete: 5, insert: "HOWDY")
        }
        try exchange(a, b)
        #expect(try a.text(t) == ">> HOWDY world!")
        for d in [a, b] {
            #expect(try d.index(of: before, in: t) == 9)
            // "o" was deleted; "HOWDY" attached to the visible ">> " before it, so the
            // tombstone of "o" (and the cursor after it) sits after "HOWDY".
            #expect(try d.index(of: after, in: t) == 8)
        }
    }

    @Test func sidesDecideWhereConcurrentInsertsAtTheCursorGo() throws {
        let (a, b, t) = try pair("ab")
        let beforeB = try a.cursor(t, at: 1, side: .before)
        let afterA = try a.cursor(t, at: 1, side: .after)
        #expect(try a.index(of: beforeB, in: t) == 1)
        #expect(try a.index(of: afterA, in: t) == 1)
        try b.change(time: 0) { try $0.splice(t, at: 1, insert: "XYZ") }
        try exchange(a, b)
        #expect(try a.text(t) == "aXYZb")
        #expect(try a.index(of: beforeB, in: t) == 4)
        #expect(try a.index(of: afterA, in: t) == 1)
    }

    @Test func deletedItemResolvesToItsTombstone() throws {
        let (a, b, t) = try pair("abcdef")
        let c = try a.cursor(t, at: 2)  // before "c"
        try a.change(time: 0) { try $0.splice(t, at: 1, delete: 3) }  // "aef"
        try b.change(time: 0) { try $0.splice(t, at: 0, insert: "XY") }
        try exchange(a, b)
        #expect(try b.text(t) == "XYaef")
        #expect(try a.index(of: c, in: t) == 3)
        #expect(try b.index(of: c, in: t) == 3)
    }

    @Test func endsAndEmptySequences() throws {
        let (a, b, t) = try pair("")
        #expect(try a.cursor(t, at: 0) == .end)
        #expect(try a.cursor(t, at: 0, side: .after) == .start)
        try a.change(time: 0) { try $0.splice(t, at: 0, insert: "xyz") }
        let end = try a.cursor(t, at: 3)
        #expect(end == .end)
        try b.change(time: 0) { try $0.splice(t, at: 0, insert: "12") }
        try exchange(a, b)
        #expect(try a.index(of: end, in: t) == 5)
        #expect(try a.index(of: .start, in: t) == 0)
        #expect(throws: CRDTError.self) { try a.cursor(t, at: 6) }
        #expect(throws: CRDTError.self) { try a.cursor(.root, at: 0) }
    }

    @Test func unknownItemsAreTypedErrors() throws {
        let (a, _, t) = try pair("abc")
        let l = try a.change(time: 0) { try $0.put(.root, "l", .list)! }
        try a.change(time: 0) { try $0.insert(l, at: 0, 1) }
        let c = try a.cursor(l, at: 0)
        #expect(try a.index(of: c, in: l) == 0)
        #expect { try a.index(of: c, in: t) } throws: { ($0 as? CRDTError)?.code == .noSuchItem }
        let stranger = Cursor(anchor: .item(actor: .named("nobody"), counter: 3, side: .before))
        #expect { try a.index(of: stranger, in: t) } throws: { ($0 as? CRDTError)?.code == .noSuchItem }
    }

    @Test func encodingsRoundTripAndRejectGarbage() throws {
        let (a, _, t) = try pair("hello")
        let cursors = [try a.cursor(t, at: 2), try a.cursor(t, at: 2, side: .after), Cursor.start, Cursor.end]
        for c in cursors {
            #expect(Cursor(c.description) == c)
            #expect(try Cursor(bytes: c.bytes) == c)
            let json = try JSONEncoder().encode([c])
            #expect(try JSONDecoder().decode([Cursor].self, from: json) == [c])
        }
        for bad in ["", "middle", "before:", "before:x@00", "after:3@zz", "before:0@61", "sideways:3@61"] { #expect(Cursor(bad) == nil, "\(bad)") }
        for bad: [UInt8] in [[], [9], [2], [2, 5], [2, 0, 1, 7], [2, 5, 0], [0, 0], [3, 5, 40] + Array(repeating: 1, count: 40)] {
            #expect(throws: CRDTError.self, "\(bad)") { try Cursor(bytes: bad) }
        }
    }

    /// Random concurrent edits on a list of unique values: a cursor before (after) a surviving
    /// element always resolves to that element's index (plus one).
    @Test func randomConcurrentListEdits() throws {
        for seed: UInt64 in 1...20 {
            var rng = SplitMix64(seed: seed)
            let a = Document(actor: .named("a")), b = Document(actor: .named("b"))
            let l = try a.change(time: 0) { try $0.put(.root, "l", .list)! }
            try a.change(time: 0) { tx in for v in 0..<20 { try tx.insert(l, at: Int(v), .scalar(.int(Int64(v)))) } }
            try b.apply(a.allChanges())
            var next: Int64 = 100
            let pick = Int.random(in: 0..<20, using: &rng)
            let cb = try a.cursor(l, at: pick), ca = try a.cursor(l, at: pick + 1, side: .after)
            let target = try a.get(l, at: pick)!
            for _ in 0..<3 {
                for d in [a, b] {
                    for _ in 0..<5 {
                        let n = try d.length(l)
                        if n > 0 && Int.random(in: 0..<3, using: &rng) == 0 {
                            let i = Int.random(in: 0..<n, using: &rng)
                            if try d.get(l, at: i) != target { try d.change(time: 0) { try $0.delete(l, at: i) } }
                        } else {
                            next += 1
                            try d.change(time: 0) { try $0.insert(l, at: Int.random(in: 0...n, using: &rng), .scalar(.int(next))) }
                        }
                    }
                }
                try exchange(a, b)
                let values = try (0..<a.length(l)).map { try a.get(l, at: $0)! }
                let expected = try #require(values.firstIndex(of: target), "seed \(seed)")
                for d in [a, b] {
                    #expect(try d.index(of: cb, in: l) == expected, "seed \(seed)")
                    #expect(try d.index(of: ca, in: l) == expected + 1, "seed \(seed)")
                }
            }
        }
    }

    /// Runs name every visible item exactly as `cursor(_:at:)` does, across concurrent edits
    /// and deletions, and stay short for typing.
    @Test func cursorRunsMatchCursorsItemByItem() throws {
        let seed = testSeed("CursorTests.cursorRuns", fallback: 0xC0_2503)
        var rng = SplitMix64(seed: seed)
        let (a, b, t) = try pair("the quick brown fox")
        for round in 0..<30 {
            for d in [a, b] {
                let length = try d.length(t)
                let at = Int(rng.next() % UInt64(length + 1))
                if rng.next() % 3 == 0, length > 0 {
                    try d.change(time: 0) { try $0.splice(t, at: min(at, length - 1), delete: 1) }
                } else {
                    try d.change(time: 0) { try $0.splice(t, at: at, insert: "r\(round)") }
                }
            }
            if round % 4 == 3 { try exchange(a, b) }
        }
        try exchange(a, b)
        for d in [a, b] {
            let runs = try d.cursorRuns(t)
            #expect(runs.reduce(0) { $0 + $1.length } == (try d.length(t)), "seed \(seed)")
            var index = 0
            for run in runs {
                #expect(run.length > 0)
                for offset in 0..<run.length {
                    #expect(run.cursor(at: offset) == (try d.cursor(t, at: index)), "seed \(seed) index \(index)")
                    #expect(try d.index(of: run.cursor(at: offset, side: .after), in: t) == index + 1)
                    index += 1
                }
            }
        }
        // One typist, no deletions: a single run however many changes.
        let solo = Document(actor: .named("solo"))
        let text = try solo.change(time: 0) { try $0.put(.root, "t", .text)! }
        for i in 0..<50 { try solo.change(time: 0) { try $0.splice(text, at: i, insert: "x") } }
        #expect(try solo.cursorRuns(text).count == 1)
    }
}
