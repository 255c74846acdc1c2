extension Document {
    /// The patches that turn the view at `from` into the view at `to`, in the order to apply.
    ///
    /// Either may be any set of known heads (earlier, later or concurrent). Sequences are
    /// compared by item id, not by content: the items of both versions are walked in
    /// their common order (that of the version holding both) and each item's visibility
    /// at `from` and at `to` decides whether it is kept, removed or inserted. Map keys and
    /// list elements compare their winning values by op id. Unknown heads throw
    /// `.unknownHeads`.
    public func diff(from: [ChangeHash], to: [ChangeHash]) throws -> [Patch] {
        let builder = PatchBuilder(a: try view(at: from), b: try view(at: to), union: try view(at: from + to))
        builder.touched = try objectsChanged(between: from, and: to)
        try builder.object(.root, fresh: false)
        return builder.patches
    }

    /// The objects that ops of changes in one version's history but not the other's act
    /// on. Every other object has the same state in both versions. O(history + those ops).
    func objectsChanged(between x: [ChangeHash], and y: [ChangeHash]) throws -> Set<ObjectID> {
        let mx = ancestryMask(try recordIndices(x))
        let my = ancestryMask(try recordIndices(y))
        var out = Set<ObjectID>()
        for i in records.indices where mx[i] != my[i] {
            for op in records[i].ops { out.insert(publicID(op.obj)) }
        }
        return out
    }
}

/// Builds the patches from version `a` to version `b`; `union` holds every item of both.
final class PatchBuilder {
    let a: Document
    let b: Document
    let union: Document
    private(set) var patches: [Patch] = []
    /// Objects whose state may differ between `a` and `b` (nil: any may). A sequence not
    /// in it is identical in both, so only its nested objects need a look.
    var touched: Set<ObjectID>?

    init(a: Document, b: Document, union: Document) {
        self.a = a
        self.b = b
        self.union = union
    }

    /// An op id in portable form, to compare entries of different documents.
    private struct EntryID: Hashable {
        let counter: Int
        let actor: ActorID
    }

    private func entryID(_ d: Document, _ e: Register.Entry) -> EntryID {
        EntryID(counter: e.id.counter, actor: d.actors[Int(e.id.actor)])
    }

    /// Patches for object `id` as it is in `b`; `fresh` means the UI holds it empty.
    func object(_ id: ObjectID, fresh: Bool) throws {
        let inB = try b.state(id).1
        let inA = fresh ? nil : (try? a.state(id))?.1
        switch inB {
        case .map(let mb):
            var ma: MapState?
            if case .map(let m)? = inA { ma = m }
            try map(id, ma, mb)
        case .sequence(let qb):
            var qa: SequenceState?
            if case .sequence(let q)? = inA { qa = q }
            try sequence(id, qa, qb, try union.anySequence(id))
        }
    }

    private func map(_ id: ObjectID, _ ma: MapState?, _ mb: MapState) throws {
        let keys = Set(ma?.keys.keys.map { $0 } ?? []).union(mb.keys.keys).sorted()
        for k in keys {
            let ra = ma?.keys[k]
            let rb = mb.keys[k]
            let wa = ra?.winner(a.actorLess)
            if let wb = rb?.winner(b.actorLess) {
                try slot(id, .key(k), wa, wb)
                conflicts(id, .key(k), ra, rb!)
            } else if wa != nil {
                patches.append(.delete(obj: id, key: k))
            }
        }
    }

    /// A map key or list element present in `b`: unchanged, incremented, descended into,
    /// or overwritten.
    private func slot(_ obj: ObjectID, _ key: PathElement, _ wa: Register.Entry?, _ wb: Register.Entry) throws {
        if let wa, entryID(a, wa) == entryID(b, wb) {
            switch wb.value {
            case .object: try object(b.publicID(wb.id), fresh: false)
            case .scalar(.counter):
                if wa.increments != wb.increments { patches.append(.increment(obj: obj, key: key, by: wb.increments &- wa.increments)) }
            case .scalar: break
            }
        } else {
            patches.append(.put(obj: obj, key: key, value: b.value(of: wb)))
            if case .object = wb.value { try object(b.publicID(wb.id), fresh: true) }
        }
    }

    /// Reports the concurrent values when their set changed and either side has several.
    private func conflicts(_ obj: ObjectID, _ key: PathElement, _ ra: Register?, _ rb: Register) {
        let before = Set(ra?.entries.map { entryID(a, $0) } ?? [])
        let after = Set(rb.entries.map { entryID(b, $0) })
        guard before != after, before.count > 1 || after.count > 1 else { return }
        patches.append(.conflict(obj: obj, key: key, values: rb.sorted(b.actorLess).map(b.value(of:))))
    }

    private enum Run { case none, remove, insert, text }

    private func sequence(_ id: ObjectID, _ qa: SequenceState?, _ qb: SequenceState, _ qu: SequenceState) throws {
        if qa != nil, let touched, !touched.contains(id) {
            guard !qb.isText else { return }
            var nested: [ObjectID] = []
            qb.forEachVisible { _, ci in
                if let w = qb.elements[ci].winner(b.actorLess), case .object = w.value { nested.append(b.publicID(w.id)) }
            }
            for o in nested { try object(o, fresh: false) }
            return
        }
        let toA = union.actors.map { a.actorIndex[$0] }
        let toB = union.actors.map { b.actorIndex[$0] }
        // The patch being accumulated: kind, start index, and content.
        var run = Run.none
        var runStart = 0
        var runCount = 0
        var runValues: [Value] = []
        var runText = ""
        // Inserted elements holding objects (filled after the insert) or several values.
        var inserted: [(index: Int, register: Register)] = []
        var i = 0
        // Formatted text: for each character of `b`, its index in `a` (nil: inserted), to
        // compare marks once the text patches are out.
        let withMarks = qb.isText && (!qb.marks.isEmpty || qa?.marks.isEmpty == false)
        var indexInA: [Int?] = []
        var ia = 0
        func flush() throws {
            switch run {
            case .none: return
            case .remove: patches.append(.remove(obj: id, index: runStart, count: runCount))
            case .insert: patches.append(.insert(obj: id, index: runStart, values: runValues))
            case .text: patches.append(.splice(obj: id, index: runStart, text: runText))
            }
            run = .none
            runCount = 0
            runValues = []
            runText = ""
            for (index, reg) in inserted {
                if let w = reg.winner(b.actorLess), case .object = w.value { try object(b.publicID(w.id), fresh: true) }
                conflicts(id, .index(index), nil, reg)
            }
            inserted = []
        }
        func extend(_ kind: Run) throws {
            if run != kind {
                try flush()
                run = kind
                runStart = i
            }
        }
        func find(_ q: SequenceState?, _ map: [Int32?], _ uid: OpID) -> SequenceState.Location? {
            guard let q, let actor = map[Int(uid.actor)] else { return nil }
            return q.locate(OpID(counter: uid.counter, actor: actor))
        }
        for leaf in qu.leaves {
            for s in leaf.spans {
                var byte = s.contentStart
                for k in 0..<s.length {
                    let uid = s.id.advanced(by: k)
                    var scalar: ArraySlice<UInt8> = []
                    if qu.isText {
                        let c = qu.utf8[byte]
                        let w = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4
                        scalar = qu.utf8[byte..<byte + w]
                        byte += w
                    }
                    let la = find(qa, toA, uid)
                    let lb = find(qb, toB, uid)
                    let visibleA = la.map { !$0.leaf.spans[$0.span].deleted } ?? false
                    let visibleB = lb.map { !$0.leaf.spans[$0.span].deleted } ?? false
                    if withMarks && visibleB { indexInA.append(visibleA ? ia : nil) }
                    if visibleA { ia += 1 }
                    switch (visibleA, visibleB) {
                    case (true, true):
                        try flush()
                        if !qb.isText, let la, let lb, let qa {
                            let ra = qa.elements[la.leaf.spans[la.span].contentStart + la.offset]
                            let rb = qb.elements[lb.leaf.spans[lb.span].contentStart + lb.offset]
                            if let wb = rb.winner(b.actorLess) {
                                try slot(id, .index(i), ra.winner(a.actorLess), wb)
                                conflicts(id, .index(i), ra, rb)
                            }
                        }
                        i += 1
                    case (true, false):
                        try extend(.remove)
                        runCount += 1
                    case (false, true):
                        if qb.isText {
                            try extend(.text)
                            runText += String(decoding: scalar, as: UTF8.self)
                        } else {
                            let lb = lb!
                            let reg = qb.elements[lb.leaf.spans[lb.span].contentStart + lb.offset]
                            let v = reg.winner(b.actorLess).map(b.value(of:)) ?? .scalar(.null)
                            try extend(.insert)
                            runValues.append(v)
                            if reg.entries.count > 1 || { if case .object = v { true } else { false } }() {
                                inserted.append((i, reg))
                            }
                        }
                        i += 1
                    case (false, false):
                        break
                    }
                }
            }
        }
        try flush()
        if withMarks { marks(id, qa, qb, indexInA) }
    }

    /// `.marks` patches for the characters of text `id` whose marks in `b` differ from what
    /// the view holds after the text patches: their marks in `a`, none for inserted text.
    private func marks(_ id: ObjectID, _ qa: SequenceState?, _ qb: SequenceState, _ indexInA: [Int?]) {
        let marksA = qa.map { a.visibleMarks($0) } ?? []
        let marksB = b.visibleMarks(qb)
        var k = 0
        while k < marksB.count {
            let held = indexInA[k].map { marksA[$0] } ?? []
            guard held != marksB[k] else {
                k += 1
                continue
            }
            let start = k
            k += 1
            while k < marksB.count, marksB[k] == marksB[start], (indexInA[k].map { marksA[$0] } ?? []) != marksB[k] { k += 1 }
            patches.append(.marks(obj: id, index: start, count: k - start, marks: marksB[start]))
        }
    }
}
