extension Document {
    /// The text of `obj` cut into runs of equal marks (see ``Mark``), in order; their texts
    /// joined are ``text(_:)``. Plain text is one span without marks, an empty text no span.
    ///
    /// ```swift
    /// try doc.change { tx in
    ///     try tx.splice(body, at: 0, insert: "Hello world")
    ///     try tx.mark(body, 0..<5, "bold")
    /// }
    /// try doc.spans(body)   // [TextSpan("Hello", marks: [bold]), TextSpan(" world")]
    /// ```
    public func spans(_ obj: ObjectID) throws -> [TextSpan] {
        let seq = try sequence(obj, text: true).1
        return seq.markedRuns(seq.resolveMarks(less: opLess)).map { TextSpan($0.text, marks: publicMarks($0.marks)) }
    }

    /// The spans of a text object as of `heads` (see ``spans(_:)``).
    public func spans(_ obj: ObjectID, at heads: [ChangeHash]) throws -> [TextSpan] {
        try view(at: heads).spans(obj)
    }

    /// Lamport order on op ids: by counter, then by the actors' bytes.
    func opLess(_ a: OpID, _ b: OpID) -> Bool {
        a.counter != b.counter ? a.counter < b.counter : actorLess(a.actor, b.actor)
    }

    func publicMarks(_ marks: [ResolvedMark]) -> [Mark] {
        marks.map { m in
            Mark(name: m.name, value: m.value, id: m.instance.map { MarkID(counter: $0.counter, actor: actors[Int($0.actor)]) })
        }
    }

    /// The marks of every visible character, in order (each an array shared by its run).
    func visibleMarks(_ seq: SequenceState) -> [[Mark]] {
        var out: [[Mark]] = []
        out.reserveCapacity(seq.visibleCount)
        for run in seq.markedRuns(seq.resolveMarks(less: opLess)) {
            let marks = publicMarks(run.marks)
            out.append(contentsOf: repeatElement(marks, count: run.count))
        }
        return out
    }

    // MARK: Local mark ops

    /// The anchors of a mark over visible `range` (not empty) of `seq` with `expand`.
    func anchors(_ seq: SequenceState, _ range: Range<Int>, _ expand: Mark.Expand) -> (MarkOp.Anchor, MarkOp.Anchor) {
        func item(_ i: Int) -> OpID { seq.contentOffset(atVisible: i)!.0 }
        let start: MarkOp.Anchor
        if expand == .before || expand == .both {
            start = range.lowerBound == 0 ? .start : .after(item(range.lowerBound - 1))
        } else {
            start = .before(item(range.lowerBound))
        }
        let end: MarkOp.Anchor
        if expand == .after || expand == .both {
            end = range.upperBound == seq.visibleCount ? .end : .before(item(range.upperBound))
        } else {
            end = .after(item(range.upperBound - 1))
        }
        return (start, end)
    }

    /// Records and applies a local mark op; `instance == .root` stands for "this op's own id"
    /// (a new overlapping mark). Notes its undo step (the values the mark had before, run by
    /// run) and its patches. Returns the op's id.
    @discardableResult
    func markLocal(_ o: OpID, _ seq: SequenceState, _ m: MarkOp) -> OpID {
        var m = m
        let id = nextOpID(width: 1)
        if m.instance == .root { m.instance = id }
        let covered = seq.coverage(m)
        if undoLog.isRecording {
            noteUndo(.marked(obj: o, start: m.start, end: m.end, name: m.name, instance: m.instance, previous: previousValues(seq, m, covered)))
        }
        recordLocal(Op(id: id, obj: o, action: .mark(m)))
        seq.addMark(m, id: id)
        if patchesWanted {
            let (first, ids) = seq.visibleItems(inAbsolute: covered)
            for p in markPatches(publicID(o), seq, first..<first + ids.count, onlyMarked: false) { notePatch(p) }
        }
        return id
    }

    /// The values the mark `m` names (`name`, `instance`) has on the visible items `m`
    /// covers, as runs: each run's first item and value (nil: unmarked).
    private func previousValues(_ seq: SequenceState, _ m: MarkOp, _ covered: Range<Int>) -> [(first: OpID, value: ScalarValue?)] {
        let (first, ids) = seq.visibleItems(inAbsolute: covered)
        guard !ids.isEmpty else { return [] }
        var values: [ScalarValue?] = []
        values.reserveCapacity(ids.count)
        var index = 0
        for run in seq.markedRuns(seq.resolveMarks(less: opLess)) {
            let lo = max(index, first), hi = min(index + run.count, first + ids.count)
            if lo < hi {
                let v = run.marks.first { $0.name == m.name && $0.instance == m.instance }?.value
                values.append(contentsOf: repeatElement(v, count: hi - lo))
            }
            index += run.count
        }
        var out: [(first: OpID, value: ScalarValue?)] = []
        for (k, v) in values.enumerated() where out.isEmpty || out.last!.value != v {
            out.append((ids[k], v))
        }
        return out
    }

    /// `.marks` patches for the visible `range` of a text, run by run; `onlyMarked` leaves
    /// out runs without marks (for text a view has just inserted plain).
    func markPatches(_ obj: ObjectID, _ seq: SequenceState, _ range: Range<Int>, onlyMarked: Bool) -> [Patch] {
        guard !range.isEmpty else { return [] }
        var out: [Patch] = []
        var index = 0
        for run in seq.markedRuns(seq.resolveMarks(less: opLess)) {
            let lo = max(index, range.lowerBound), hi = min(index + run.count, range.upperBound)
            if lo < hi && !(onlyMarked && run.marks.isEmpty) {
                out.append(.marks(obj: obj, index: lo, count: hi - lo, marks: publicMarks(run.marks)))
            }
            index += run.count
            if index >= range.upperBound { break }
        }
        return out
    }

    /// Undoes a mark op: puts back the values its range had before, run by run (the first
    /// run from the op's own start anchor, the last to its own end anchor, so the restored
    /// range grows at its edges as the undone one did).
    func invertMark(obj o: OpID, start: MarkOp.Anchor, end: MarkOp.Anchor, name: String, instance: OpID?,
                    previous: [(first: OpID, value: ScalarValue?)]) {
        guard case .sequence(let seq) = objects[o] else { return }
        for (k, run) in previous.enumerated() {
            let s: MarkOp.Anchor = k == 0 ? start : .before(run.first)
            let e: MarkOp.Anchor = k == previous.count - 1 ? end : .before(previous[k + 1].first)
            markLocal(o, seq, MarkOp(start: s, end: e, name: name, value: run.value, instance: instance))
        }
    }
}

extension Document {
    /// The marks of the items `ids` of a text (deleted ones too: tombstones keep theirs).
    func marks(ofItems ids: [OpID], in seq: SequenceState) -> [[ResolvedMark]] {
        let runs = seq.resolveMarks(less: opLess)
        return ids.map { id in
            guard let loc = seq.locate(id) else { return [] }
            let p = seq.absoluteIndex(of: loc)
            var lo = 0, hi = runs.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if runs[mid].end <= p { lo = mid + 1 } else { hi = mid }
            }
            return lo < runs.count && runs[lo].start <= p ? runs[lo].marks : []
        }
    }

    /// Gives the consecutive new characters `ids` (text undo put back) the marks `wanted`
    /// (those of the deleted characters they stand for) by mark ops over the runs where
    /// they differ, none of which grows.
    func restoreMarks(_ o: OpID, _ seq: SequenceState, _ ids: [OpID], _ wanted: [[ResolvedMark]]) {
        struct Key: Hashable {
            var name: String
            var instance: OpID?
        }
        let current = marks(ofItems: ids, in: seq)
        var keys: [Key] = []
        for m in (wanted + current).joined() where !keys.contains(Key(name: m.name, instance: m.instance)) {
            keys.append(Key(name: m.name, instance: m.instance))
        }
        for key in keys {
            func value(_ marks: [ResolvedMark]) -> ScalarValue? { marks.first { $0.name == key.name && $0.instance == key.instance }?.value }
            var k = 0
            while k < ids.count {
                let v = value(wanted[k])
                var end = k, differs = false
                while end < ids.count && value(wanted[end]) == v {
                    if value(current[end]) != v { differs = true }
                    end += 1
                }
                if differs {
                    markLocal(o, seq, MarkOp(start: .before(ids[k]), end: .after(ids[end - 1]), name: key.name, value: v, instance: key.instance))
                }
                k = end
            }
        }
    }
}
