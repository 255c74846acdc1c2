import Testing
@testable import ImprintCRDT
import ImprintTestSupport

/// Hostile saves whose checksums are valid but whose change headers or ops declare op
/// counts the file does not hold: each must fail with `.malformed` (or `.tooLarge`) without
/// allocating memory in proportion to the declared counts.
@Suite struct DeclaredCountTests {
    /// Actor x's text typed in `changes` changes, one letter at a time ("a", then "b", "c",
    /// "d" cycling), then actor y deleting the second letter: x's changes hold counters
    /// 1 ... changes + 1 (the first also creates the text), y's one change (the last) a remove.
    static func history(changes: Int = 2) throws -> (doc: Document, text: ObjectID) {
        let x = Document(actor: .named("x"))
        let t = try x.change { tx in
            let t = try tx.put(.root, "t", .text)!
            try tx.splice(t, at: 0, insert: "a")
            return t
        }
        // Sealed, so the next edit starts a change of its own (not coalesced into this one).
        x.sealAll()
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

    /// `d`'s payload in every layout that stores change headers differently: version 5
    /// (runs), 3 (one per change, visible text first) and 1.
    static func payloads(_ d: Document) -> [(payload: [UInt8], version: UInt8)] {
        [d.encodePayload(), d.encodePayload(visibleTextFirst: true, runHeaders: false), d.encodePayload(visibleTextFirst: false)]
    }

    /// Loads `d`'s save in every payload layout, the whole history decoded and validated
    /// (`finishLoading`), expecting each to load and read text `t` as `d` does.
    static func expectLoads(_ d: Document, text t: ObjectID, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for (payload, version) in payloads(d) {
            let loaded = try Document.load(DocumentFormat.frame(payload, version: version))
            try loaded.finishLoading()
            #expect(try loaded.text(t) == d.text(t), "version \(version)", sourceLocation: sourceLocation)
        }
    }

    /// Loads `d`'s save in every payload layout (versions 3 and 5 are decoded in full by
    /// `finishLoading`), expecting each to throw `.malformed`.
    static func expectMalformed(_ d: Document, sourceLocation: SourceLocation = #_sourceLocation) {
        for (payload, version) in payloads(d) {
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

    /// The same gap, consistent: x's second change, its item and y's remove of it all moved
    /// to counter 2^40 − 1 (the state's span too). Every op then lies in its change, so the
    /// claims are built: main's rows spanned the gap and asked for 4 TiB; the per-change
    /// layout costs one slot per item. Loads, or is refused as `.malformed` by a later check.
    @Test func aConsistentGapBetweenAnActorsChangesCostsNothing() throws {
        let (d, t) = try Self.history()
        let far = ChangeCoding.maxOpCount - 1
        Self.setHeader(d, 1, startOp: far)
        let moved = d.records[1].ops.map { op in
            guard case .insertText(let l, let r, let b, let n) = op.action else { return op }
            return Op(id: OpID(counter: far, actor: op.id.actor), obj: op.obj, action: .insertText(left: l, right: r, utf8: b, count: n))
        }
        d.records[1].ops = moved
        let y = d.records[2]
        d.records[2].ops = y.ops.map { op in
            guard case .remove(let target, let n) = op.action else { return op }
            return Op(id: op.id, obj: op.obj, action: .remove(target: OpID(counter: far, actor: target.actor), count: n))
        }
        guard case .sequence(let s)? = d.objects[try d.internalID(t)] else {
            Issue.record("no text")
            return
        }
        var found = false
        for l in s.leaves.indices {
            for k in s.leaves[l].spans.indices where s.leaves[l].spans[k].id.counter == 3 {
                s.leaves[l].spans[k].id = OpID(counter: far, actor: s.leaves[l].spans[k].id.actor)
                found = true
            }
        }
        #expect(found, "the span of change 1's item")
        for (payload, version) in Self.payloads(d) {
            do {
                let loaded = try Document.load(DocumentFormat.frame(payload, version: version))
                try loaded.finishLoading()
                #expect(try loaded.text(t) == "a")
            } catch let e as CRDTError {
                #expect(e.code == .malformed, "version \(version): \(e)")
            }
        }
    }

    /// x's last change declaring ~2^40 ops it does not hold (its counters up to 2^40 − 1).
    @Test func aHugeDeclaredOpCountIsRefusedBeforeAllocating() throws {
        let (d, _) = try Self.history()
        Self.setHeader(d, 1, opCount: ChangeCoding.maxOpCount - d.records[1].startOp)
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

    /// Eight actors each with a change near the start and one after actor "long" typed
    /// 6,000 characters, the late ones deleting: their counters span ~8 × 6,000, far more
    /// than a few slots per item, so `OpClaims` lays the changes out one by one (no rows).
    static func sparseActors() throws -> (doc: Document, text: ObjectID) {
        let base = Document(actor: .named("long"))
        let t = try base.change { tx in try tx.put(.root, "t", .text)! }
        var docs = (0..<8).map { Document(actor: .named("a\($0)")) }
        for (i, d) in docs.enumerated() {
            try d.apply(base.allChanges())
            try d.change { tx in try tx.splice(t, at: 0, insert: "\(i)") }
            try base.apply(d.allChanges())
        }
        try base.change { tx in try tx.splice(t, at: try base.length(t), insert: String(repeating: "x", count: 6000)) }
        for (i, d) in docs.enumerated() {
            try d.apply(base.allChanges())
            try d.change { tx in try tx.splice(t, at: 8 + 700 * i, delete: 3 + i, insert: "y") }
        }
        for d in docs { try base.apply(d.allChanges()) }
        docs = []
        return (base, t)
    }

    @Test func sparseActorsLoadThroughTheChangeLayout() throws {
        let (d, t) = try Self.sparseActors()
        for (payload, version) in Self.payloads(d) {
            let loaded = try Document.load(DocumentFormat.frame(payload, version: version))
            try loaded.finishLoading()
            #expect(try loaded.text(t) == (try d.text(t)))
            #expect(loaded.currentHeads == d.currentHeads)
            #expect(DecoderFuzzTests.brokenPromises(loaded).isEmpty)
        }
    }

    /// Mutated payloads of that document, behind valid checksums: each loads or throws
    /// `CRDTError`, never crashes, and one that loads keeps every promise (a deleted-run
    /// column altered so that spans' deleted flags disagree with the removes is refused).
    @Test func mutatedSparsePayloadsNeverCrash() throws {
        let seed: UInt64 = 0x5EED_0017
        var rng = SplitMix64(seed: seed)
        let (d, _) = try Self.sparseActors()
        // Version 1 and version 5 (change runs) in turn.
        let layouts = [d.encodePayload(visibleTextFirst: false), d.encodePayload()]
        for round in 0..<400 {
            let (payload, version) = layouts[round / 3 % 2]
            var m = payload
            DecoderFuzzTests.mutate(&m, kind: round % 3, using: &rng)
            _ = DecoderFuzzTests.loadsKeepingPromises(DocumentFormat.frame(m, version: version), "seed \(seed) round \(round)")
        }
    }
}
