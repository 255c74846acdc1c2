/// What a text's mark ops resolve to (Peritext, `docs/crdt-semantics.md`, "Marks").
///
/// A mark op covers the items between its anchors in document order, tombstones
/// included; for every item and every mark (a name, plus an instance for marks that may
/// overlap) the covering op with the greatest id wins, and its value (or its clearing)
/// is the item's. The result depends only on the set of ops and the converged order of
/// the items, never on the order ops arrived in, so every replica reads the same marks.
///
/// ```
/// items   h  e  l  l  o          (absolute indices 0…4, none deleted)
/// 3@a     bold over 0..<5   ──────────────
/// 5@b     unbold over 2..<4        ──────
/// result  h e bold, l l plain, o bold   (5@b > 3@a where both cover)
/// ```
struct MarkRun: Equatable {
    /// Absolute item range (tombstones counted), `start < end`.
    var start: Int
    var end: Int
    /// The marks of every item in the range, sorted (never empty).
    var marks: [ResolvedMark]
}

/// One mark an item carries, in document-local ids.
struct ResolvedMark: Hashable {
    var name: String
    var value: ScalarValue
    var instance: OpID?
}

extension SequenceState {
    /// Records a mark op (local or remote; order does not matter).
    func addMark(_ m: MarkOp, id: OpID) {
        marks.append((id, m))
    }

    /// The characters marks end just after (`after(t)` end anchors: marks that do not grow
    /// at their end) and start just before (`before(t)` start anchors), for placing local
    /// inserts among tombstones.
    func markBoundaries() -> (closing: Set<OpID>, opening: Set<OpID>) {
        var closing = Set<OpID>(), opening = Set<OpID>()
        for (_, m) in marks {
            if case .after(let t) = m.end { closing.insert(t) }
            if case .before(let t) = m.start { opening.insert(t) }
        }
        return (closing, opening)
    }

    /// The absolute index (document order, tombstones counted) of the item at `loc`.
    func absoluteIndex(of loc: Location) -> Int {
        var pos = 0
        for li in 0..<loc.leaf.index { pos += leaves[li].total }
        for si in 0..<loc.span { pos += loc.leaf.spans[si].length }
        return pos + loc.offset
    }

    /// The absolute item range a mark op covers: from its start anchor's gap to its end
    /// anchor's gap (`before(x)` is the gap at x's index, `after(x)` the one after it).
    func coverage(_ m: MarkOp) -> Range<Int> {
        func gap(_ a: MarkOp.Anchor) -> Int {
            switch a {
            case .start: return 0
            case .end: return totalCount
            case .before(let id): return locate(id).map { absoluteIndex(of: $0) } ?? 0
            case .after(let id): return locate(id).map { absoluteIndex(of: $0) + 1 } ?? 0
            }
        }
        let lo = gap(m.start), hi = gap(m.end)
        return lo < hi ? lo..<hi : lo..<lo
    }

    /// The runs of items that carry marks, in document order; `less` is Lamport order on
    /// op ids (counter, then actor bytes). Empty when the text has no mark ops.
    func resolveMarks(less: (OpID, OpID) -> Bool) -> [MarkRun] {
        guard !marks.isEmpty else { return [] }
        struct Key: Hashable {
            var name: String
            var instance: OpID?
        }
        var events: [(pos: Int, op: Int, opens: Bool)] = []
        for (i, m) in marks.enumerated() {
            let r = coverage(m.mark)
            guard !r.isEmpty else { continue }
            events.append((r.lowerBound, i, true))
            events.append((r.upperBound, i, false))
        }
        events.sort { $0.pos < $1.pos }
        var active: [Key: [Int]] = [:]
        var runs: [MarkRun] = []
        var e = 0
        while e < events.count {
            let pos = events[e].pos
            while e < events.count && events[e].pos == pos {
                let (_, i, opens) = events[e]
                let key = Key(name: marks[i].mark.name, instance: marks[i].mark.instance)
                if opens {
                    active[key, default: []].append(i)
                } else {
                    active[key]?.removeAll { $0 == i }
                    if active[key]?.isEmpty == true { active[key] = nil }
                }
                e += 1
            }
            guard e < events.count else { break }
            let next = events[e].pos
            var resolved: [ResolvedMark] = []
            for (key, ops) in active {
                var winner = ops[0]
                for i in ops.dropFirst() where less(marks[winner].id, marks[i].id) { winner = i }
                if let v = marks[winner].mark.value { resolved.append(ResolvedMark(name: key.name, value: v, instance: key.instance)) }
            }
            guard !resolved.isEmpty else { continue }
            resolved.sort { a, b in
                if a.name != b.name { return a.name < b.name }
                guard let x = a.instance else { return b.instance != nil }
                guard let y = b.instance else { return false }
                return less(x, y)
            }
            if let last = runs.last, last.end == pos, last.marks == resolved {
                runs[runs.count - 1].end = next
            } else {
                runs.append(MarkRun(start: pos, end: next, marks: resolved))
            }
        }
        return runs
    }

    /// The visible text cut into runs of equal marks, in order: each run's text, its
    /// length in code points, and its marks (empty: plain). Adjacent runs differ in marks.
    func markedRuns(_ runs: [MarkRun]) -> [(text: String, count: Int, marks: [ResolvedMark])] {
        if runs.isEmpty {
            return visibleCount == 0 ? [] : [(text(), visibleCount, [])]
        }
        var out: [(text: String, count: Int, marks: [ResolvedMark])] = []
        var absolute = 0
        var r = 0
        for leaf in leaves {
            for s in leaf.spans {
                defer { absolute += s.length }
                if s.deleted { continue }
                var k = 0
                while k < s.length {
                    let p = absolute + k
                    while r < runs.count && runs[r].end <= p { r += 1 }
                    let marks: [ResolvedMark]
                    let pieceEnd: Int
                    if r < runs.count && runs[r].start <= p {
                        marks = runs[r].marks
                        pieceEnd = min(runs[r].end - absolute, s.length)
                    } else {
                        marks = []
                        pieceEnd = r < runs.count ? min(runs[r].start - absolute, s.length) : s.length
                    }
                    let b0 = s.contentStart + byteOffset(in: s, scalars: k)
                    let b1 = s.contentStart + byteOffset(in: s, scalars: pieceEnd)
                    let piece = String(decoding: utf8[b0..<b1], as: UTF8.self)
                    if let last = out.last, last.marks == marks {
                        out[out.count - 1].text += piece
                        out[out.count - 1].count += pieceEnd - k
                    } else {
                        out.append((piece, pieceEnd - k, marks))
                    }
                    k = pieceEnd
                }
            }
        }
        return out
    }

    /// The visible items that lie in the absolute range `range`: the visible index of the
    /// first and each item's id, in order.
    func visibleItems(inAbsolute range: Range<Int>) -> (firstIndex: Int, ids: [OpID]) {
        var absolute = 0
        var visible = 0
        var first: Int?
        var ids: [OpID] = []
        outer: for leaf in leaves {
            for s in leaf.spans {
                defer {
                    absolute += s.length
                    visible += s.visibleLength
                }
                if absolute + s.length <= range.lowerBound { continue }
                if absolute >= range.upperBound { break outer }
                guard !s.deleted else { continue }
                let lo = max(range.lowerBound - absolute, 0), hi = min(range.upperBound - absolute, s.length)
                if first == nil { first = visible + lo }
                for k in lo..<hi { ids.append(s.id.advanced(by: k)) }
            }
        }
        return (first ?? visible, ids)
    }
}
