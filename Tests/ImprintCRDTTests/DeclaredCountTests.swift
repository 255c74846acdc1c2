import Testing
@testable import ImprintCRDT

/// Hostile saves whose checksums are valid but whose change headers or ops declare op
/// counts the file does not hold: each must fail with `.malformed` (or `.tooLarge`) without
/// allocating memory in proportion to the declared counts.
@Suite struct DeclaredCountTests {
    /// Actor x's text "abc" typed in `changes` changes, one letter at a time (cycling), then
    /// actor y deleting "b": x's changes hold counters 1 ... changes + 1 (the first also
    /// creates the text), y's one change a remove.
    static func history(changes: Int = 2) throws -> (doc: Document, text: ObjectID) {
        let x = Document(actor: .named("x"))
        let t = try x.change { tx in
            let t = try tx.put(.root, "t", .text)!
            try tx.splice(t, at: 0, insert: "a")
            return t
        }
        for i in 1..<changes {
            try x.change { tx in try tx.splice(t, at: i, insert: ["b", "c", "d"][i % 3]) }
            x.sealAll()
        }
        let y = Document(actor: .named("y"))
        try y.apply(x.allChanges())
        try y.change { tx in try tx.splice(t, at: 1, delete: 1) }
        try x.apply(y.allChanges())
        return (x, t)
    }

    /// Replaces change `i`'s header (its ops stay as they were).
    static func setHeader(_ d: Document, _ i: Int, startOp: Int? = nil, opCount: Int? = nil) {
        let r = d.records[i]
        d.records[i] = ChangeRecord(
            actor: r.actor, seq: r.seq, startOp: startOp ?? r.startOp, opCount: opCount ?? r.opCount, time: r.time,
            message: r.message, deps: r.deps, ops: r.ops)
    }

    /// Loads `d`'s save in every payload layout (version 3 is decoded in full by
    /// `finishLoading`), expecting each to throw `.malformed`.
    static func expectMalformed(_ d: Document, sourceLocation: SourceLocation = #_sourceLocation) {
        for visibleTextFirst in [true, false] {
            let (payload, version) = d.encodePayload(visibleTextFirst: visibleTextFirst)
            do {
                try Document.load(DocumentFormat.frame(payload, version: version)).finishLoading()
                Issue.record("version \(version) loaded", sourceLocation: sourceLocation)
            } catch let e as CRDTError {
                #expect(e.code == .malformed, "version \(version): \(e)", sourceLocation: sourceLocation)
            } catch {
                Issue.record("version \(version): \(error)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func theUntamperedHistoryLoads() throws {
        for changes in [2, 40] {
            let (d, t) = try Self.history(changes: changes)
            let loaded = try Document.load(d.save())
            try loaded.finishLoading()
            #expect(try loaded.text(t) == (try d.text(t)))
        }
    }

    /// Two changes of one actor with a gap of 2^40 counters between them: the claims table
    /// spanned the gap (4 TiB).
    @Test func aGapBetweenAnActorsChangesCostsNothing() throws {
        let (d, _) = try Self.history()
        Self.setHeader(d, 1, startOp: ChangeCoding.maxOpCount)
        Self.expectMalformed(d)
    }

    /// One change declaring 2^40 − 1 ops it does not hold.
    @Test func aHugeDeclaredOpCountIsRefusedBeforeAllocating() throws {
        let (d, _) = try Self.history()
        Self.setHeader(d, 0, opCount: ChangeCoding.maxOpCount - 1)
        Self.expectMalformed(d)
    }

    /// An actor with more than 32 changes gets an O(1) counter table (`ChangeRanges`),
    /// whose size was bounded by the declared ops: its last change declaring 2^40 ops took it.
    @Test func theCounterTableIsBoundedByWhatTheFileHolds() throws {
        let (d, _) = try Self.history(changes: 40)
        let last = d.records.lastIndex { $0.actor == d.records[0].actor }!
        Self.setHeader(d, last, opCount: ChangeCoding.maxOpCount - d.records[last].startOp)
        Self.expectMalformed(d)
    }

    /// A remove declaring 2^40 − 2 removed items, its change declaring as many ops: the
    /// declared ops add up, but the remove's counters are not items the file holds.
    @Test func aHugeRemoveCountIsRefusedBeforeAllocating() throws {
        let (d, _) = try Self.history()
        let i = d.records.indices.last!
        let r = d.records[i]
        guard case .remove(let target, _) = r.ops[0].action else {
            Issue.record("the last change is no remove")
            return
        }
        let n = ChangeCoding.maxOpCount - r.startOp
        d.records[i] = ChangeRecord(
            actor: r.actor, seq: r.seq, startOp: r.startOp, opCount: n, time: r.time, message: r.message, deps: r.deps,
            ops: [Op(id: r.ops[0].id, obj: r.ops[0].obj, action: .remove(target: target, count: n))])
        Self.expectMalformed(d)
    }
}
