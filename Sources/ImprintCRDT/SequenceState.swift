/// The state of one list or text object: items in document order (tombstones kept),
/// stored as run-length spans in a two-level counted tree of leaves.
///
/// Position lookups walk the leaf counts (with a cache for sequential editing); id
/// lookups go through a per-actor `IDIndex`. Concurrent inserts are ordered by the
/// FugueMax / YjsMod integration rule (see `docs/crdt-semantics.md`).
final class SequenceState {
    // Properties edits touch are `@exclusivity(unchecked)` in release builds only (see the
    // note on exclusivity at the top of `Document`).
    /// A place in document order: item `offset` of span `span` in `leaf`.
    struct Location {
        var leaf: SpanLeaf
        var span: Int
        var offset: Int

        /// Lexicographic document order; valid while no mutation happens in between.
        @inline(__always) func order() -> (Int, Int, Int) { (leaf.index, span, offset) }
    }

    let isText: Bool
    #if DEBUG
    var leaves: [SpanLeaf]
    #else
    @exclusivity(unchecked) var leaves: [SpanLeaf]
    #endif
    /// Text: UTF-8 of every item ever inserted (deleted ones too), addressed by spans.
    #if DEBUG
    var utf8: [UInt8] = []
    #else
    @exclusivity(unchecked) var utf8: [UInt8] = []
    #endif
    /// List: one register per element ever inserted.
    #if DEBUG
    var elements: [Register] = []
    #else
    @exclusivity(unchecked) var elements: [Register] = []
    #endif
    /// List: each element's value as inserted (history keeps it after overwrites).
    var initialValues: [NewValue] = []
    /// Text: every mark op received, in arrival order (`MarkResolution.swift` resolves
    /// them). Empty for plain text, which then costs nothing more to edit or read.
    #if DEBUG
    var marks: [(id: OpID, mark: MarkOp)] = []
    #else
    @exclusivity(unchecked) var marks: [(id: OpID, mark: MarkOp)] = []
    #endif
    /// Per-actor id index; built lazily after a bulk load, so loading a document and
    /// reading its text never pays for it.
    var index: [Int32: IDIndex] {
        _read {
            if !indexBuilt { buildIndex() }
            yield storedIndex
        }
        _modify {
            if !indexBuilt { buildIndex() }
            yield &storedIndex
        }
    }
    private var storedIndex: [Int32: IDIndex] = [:]
    private var indexBuilt = true
    private(set) var visibleCount = 0
    private(set) var totalCount = 0

    // Cache of the last position lookup: leaf index and its visible start.
    private var cacheLeaf = -1
    private var cacheStart = 0

    /// Spans per leaf before it splits (tests use tiny leaves to exercise splits).
    let leafCapacity: Int

    init(isText: Bool, leafCapacity: Int = SpanLeaf.capacity) {
        self.isText = isText
        self.leafCapacity = leafCapacity
        leaves = [SpanLeaf(spans: [], index: 0)]
    }

    // MARK: Reading

    /// The visible text (text objects).
    func text() -> String {
        var visibleBytes = 0
        for leaf in leaves {
            for s in leaf.spans where !s.deleted { visibleBytes += s.contentBytes }
        }
        if visibleBytes == 0 { return "" }
        // The visible spans' bytes go straight into the string's storage (no staging copy).
        return utf8.withUnsafeBufferPointer { buf in
            String(unsafeUninitializedCapacity: visibleBytes) { out in
                var n = 0
                for leaf in leaves {
                    for s in leaf.spans where !s.deleted {
                        (out.baseAddress! + n).update(from: buf.baseAddress! + s.contentStart, count: s.contentBytes)
                        n += s.contentBytes
                    }
                }
                return n
            }
        }
    }

    /// Visible items' ids and content offsets, in order.
    func forEachVisible(_ body: (OpID, Int) -> Void) {
        for leaf in leaves {
            for s in leaf.spans where !s.deleted {
                for k in 0..<s.length {
                    body(s.id.advanced(by: k), s.contentStart + (isText ? 0 : k))
                }
            }
        }
    }

    /// Every span in document order.
    func forEachSpan(_ body: (Span) -> Void) {
        for leaf in leaves {
            for s in leaf.spans { body(s) }
        }
    }

    // MARK: Position lookup

    /// Finds the leaf containing visible position `pos` (the leaf where the pos-th visible
    /// item lives, or the last leaf for the end), and its visible start.
    @inline(__always)
    private func leafForVisible(_ pos: Int) -> (Int, Int) {
        if cacheLeaf >= 0 && cacheLeaf < leaves.count {
            let l = leaves[cacheLeaf]
            if pos >= cacheStart && pos < cacheStart + l.visible { return (cacheLeaf, cacheStart) }
            if pos == cacheStart + l.visible && cacheLeaf == leaves.count - 1 { return (cacheLeaf, cacheStart) }
            // Try the neighbours before a full walk.
            if pos >= cacheStart + l.visible && cacheLeaf + 1 < leaves.count {
                let s = cacheStart + l.visible
                let n = leaves[cacheLeaf + 1]
                if pos < s + n.visible || (pos == s + n.visible && cacheLeaf + 1 == leaves.count - 1) {
                    cacheLeaf += 1
                    cacheStart = s
                    return (cacheLeaf, s)
                }
            }
        }
        var start = 0
        var i = 0
        let last = leaves.count - 1
        while i < last {
            let v = leaves[i].visible
            if pos < start + v { break }
            start += v
            i += 1
        }
        cacheLeaf = i
        cacheStart = start
        return (i, start)
    }

    @inline(__always)
    private func invalidateCache(from leafIndex: Int) {
        if leafIndex < cacheLeaf { cacheLeaf = -1 }
    }

    /// The location right before the pos-th visible item (after any tombstones that
    /// precede it), or the end of the sequence when `pos == visibleCount`.
    func insertionPoint(_ pos: Int) -> Location {
        let (li, start) = leafForVisible(pos)
        let leaf = leaves[li]
        var remaining = pos - start
        for (si, s) in leaf.spans.enumerated() {
            if s.deleted { continue }
            if remaining < s.length { return Location(leaf: leaf, span: si, offset: remaining) }
            remaining -= s.length
        }
        return Location(leaf: leaf, span: leaf.spans.count, offset: 0)
    }

    /// Where a local insert at visible position `pos` goes: immediately after the
    /// (pos-1)-th visible item, before any tombstones that follow it (the start of the
    /// sequence for `pos == 0`). Yjs and diamond-types place local inserts the same way,
    /// so an insert next to a deletion never competes with inserts made at the
    /// deletion's other side.
    func localInsertionPoint(_ pos: Int) -> Location {
        if pos == 0 { return Location(leaf: leaves[0], span: 0, offset: 0) }
        let loc = insertionPoint(pos - 1)
        let s = loc.leaf.spans[loc.span]
        if loc.offset + 1 < s.length { return Location(leaf: loc.leaf, span: loc.span, offset: loc.offset + 1) }
        return Location(leaf: loc.leaf, span: loc.span + 1, offset: 0)
    }

    /// `localInsertionPoint(pos)` in a text with marks, placed among the tombstones that
    /// follow the (pos-1)-th visible item as Peritext places it: after the last of them that
    /// ends a mark which does not grow (an `after(t)` end anchor, in `closing`), but never
    /// past one where a mark starts (a `before(t)` start anchor, in `opening`). Text typed
    /// after a link whose last characters were deleted so stays outside the link, and text
    /// typed before a deleted mark start stays outside that mark. Plain text never gets here.
    func localInsertionPoint(_ pos: Int, closing: Set<OpID>, opening: Set<OpID>) -> Location {
        let loc = localInsertionPoint(pos)
        var cur = loc
        normalize(&cur)
        var best: Location?
        scan: while cur.span < cur.leaf.spans.count {
            let s = cur.leaf.spans[cur.span]
            guard s.deleted else { break }
            for k in cur.offset..<s.length {
                let t = s.id.advanced(by: k)
                if opening.contains(t) { break scan }
                if closing.contains(t) {
                    best = k + 1 < s.length
                        ? Location(leaf: cur.leaf, span: cur.span, offset: k + 1) : Location(leaf: cur.leaf, span: cur.span + 1, offset: 0)
                }
            }
            cur.span += 1
            cur.offset = 0
            normalize(&cur)
        }
        return best ?? loc
    }

    /// The item just before `loc` in document order, or `OpID.none` at the start.
    func item(before loc: Location) -> OpID {
        if loc.offset > 0 { return loc.leaf.spans[loc.span].id.advanced(by: loc.offset - 1) }
        if loc.span > 0 { return loc.leaf.spans[loc.span - 1].lastID }
        var li = loc.leaf.index - 1
        while li >= 0 {
            if let s = leaves[li].spans.last { return s.lastID }
            li -= 1
        }
        return .none
    }

    /// The item at `loc`, or `OpID.none` at the end.
    func item(at loc: Location) -> OpID {
        var li = loc.leaf.index
        var si = loc.span
        while li < leaves.count {
            let spans = leaves[li].spans
            if si < spans.count { return spans[si].id.advanced(by: li == loc.leaf.index && si == loc.span ? loc.offset : 0) }
            li += 1
            si = 0
        }
        return .none
    }

    // MARK: Id lookup

    /// Where item `id` is, or nil if this sequence has no such item.
    func locate(_ id: OpID) -> Location? {
        guard let leaf = index[id.actor]?.leaf(containing: id.counter) else { return nil }
        for (si, s) in leaf.spans.enumerated() where s.contains(id) {
            return Location(leaf: leaf, span: si, offset: id.counter - s.id.counter)
        }
        return nil
    }

    /// The visible index of the item at `loc` (or of the next visible item if it is deleted).
    func visibleIndex(of loc: Location) -> Int {
        var pos = 0
        for li in 0..<loc.leaf.index { pos += leaves[li].visible }
        for si in 0..<loc.span where si < loc.leaf.spans.count { pos += loc.leaf.spans[si].visibleLength }
        if loc.span < loc.leaf.spans.count && !loc.leaf.spans[loc.span].deleted { pos += loc.offset }
        return pos
    }

    func isVisible(_ id: OpID) -> Bool? {
        guard let loc = locate(id) else { return nil }
        return !loc.leaf.spans[loc.span].deleted
    }

    /// Content offset of a visible item at visible index `pos` (list element index).
    func contentOffset(atVisible pos: Int) -> (OpID, Int)? {
        guard pos >= 0 && pos < visibleCount else { return nil }
        let loc = insertionPoint(pos)
        let s = loc.leaf.spans[loc.span]
        return (s.id.advanced(by: loc.offset), s.contentStart + loc.offset)
    }

    // MARK: Mutation primitives

    /// Splits the span at `loc` so that `loc.offset` becomes a span start. Returns the
    /// span index of the right part (or `loc.span` if the offset was 0).
    @discardableResult
    private func split(_ leaf: SpanLeaf, _ si: Int, at offset: Int) -> Int {
        if offset == 0 { return si }
        var left = leaf.spans[si]
        guard offset < left.length else { return si + 1 }
        var right = left
        right.id = left.id.advanced(by: offset)
        right.length = left.length - offset
        right.left = left.id.advanced(by: offset - 1)
        let byteOffset = isText ? utf8ByteOffset(start: left.contentStart, bytes: left.contentBytes, scalars: offset, total: left.length) : offset
        right.contentStart = left.contentStart + byteOffset
        right.contentBytes = left.contentBytes - byteOffset
        left.length = offset
        left.contentBytes = byteOffset
        leaf.spans[si] = left
        leaf.spans.insert(right, at: si + 1)
        index[right.id.actor, default: IDIndex()].insert(start: right.id.counter, leaf: leaf)
        return si + 1
    }

    @inline(__always)
    private func utf8ByteOffset(start: Int, bytes: Int, scalars: Int, total: Int) -> Int {
        if bytes == total { return scalars }  // ASCII run
        var b = start
        var n = 0
        while n < scalars {
            let c = utf8[b]
            b += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4
            n += 1
        }
        return b - start
    }

    /// Inserts `span` at `(leaf, si)` (before the span currently there), merging into the
    /// previous span when it continues it; splits the leaf if it grows too large.
    private func place(_ span: Span, _ leaf: SpanLeaf, _ si: Int) {
        var leaf = leaf
        var si = si
        if si == 0 && leaf.index > 0 {
            // Prefer appending to the previous leaf: keeps runs mergeable across leaf boundaries.
            let prev = leaves[leaf.index - 1]
            leaf = prev
            si = prev.spans.count
        }
        visibleCount += span.visibleLength
        totalCount += span.length
        leaf.visible += span.visibleLength
        leaf.total += span.length
        invalidateCache(from: leaf.index)
        if si > 0 && leaf.spans[si - 1].canAppend(span) {
            leaf.spans[si - 1].length += span.length
            leaf.spans[si - 1].contentBytes += span.contentBytes
            return
        }
        leaf.spans.insert(span, at: si)
        index[span.id.actor, default: IDIndex()].insert(start: span.id.counter, leaf: leaf)
        if leaf.spans.count > leafCapacity { splitLeaf(leaf) }
    }

    private func splitLeaf(_ leaf: SpanLeaf) {
        let half = leaf.spans.count / 2
        let moved = Array(leaf.spans[half...])
        leaf.spans.removeSubrange(half...)
        leaf.recount()
        let newLeaf = SpanLeaf(spans: moved, index: leaf.index + 1)
        leaves.insert(newLeaf, at: leaf.index + 1)
        for i in (leaf.index + 2)..<leaves.count { leaves[i].index = i }
        for s in moved {
            index[s.id.actor, default: IDIndex()].update(start: s.id.counter, end: s.id.counter + s.length, leaf: newLeaf)
        }
        invalidateCache(from: leaf.index)
        if cacheLeaf == leaf.index { cacheLeaf = -1 }
    }

    // MARK: Local edits

    /// Inserts at a visible position as a local op. Returns the origins the op records.
    /// `boundaries`: mark anchors on tombstones, see `localInsertionPoint(_:closing:opening:)`
    /// (nil for text without marks).
    func insertLocal(at pos: Int, id: OpID, text: String, count: Int,
                     boundaries: (closing: Set<OpID>, opening: Set<OpID>)? = nil) -> (left: OpID, right: OpID) {
        var loc = boundaries.map { localInsertionPoint(pos, closing: $0.closing, opening: $0.opening) } ?? localInsertionPoint(pos)
        let leftID = item(before: loc)
        let rightID = item(at: loc)
        let si = split(loc.leaf, loc.span, at: loc.offset)
        loc.span = si
        let start = utf8.count
        utf8.append(contentsOf: text.utf8)
        let span = Span(
            id: id, length: count, left: leftID, right: rightID,
            contentStart: start, contentBytes: utf8.count - start, deleted: false)
        place(span, loc.leaf, loc.span)
        return (leftID, rightID)
    }

    /// Inserts one list element as a local op.
    func insertElementLocal(at pos: Int, id: OpID, register: Register) -> (left: OpID, right: OpID) {
        var loc = localInsertionPoint(pos)
        let leftID = item(before: loc)
        let rightID = item(at: loc)
        loc.span = split(loc.leaf, loc.span, at: loc.offset)
        let span = Span(id: id, length: 1, left: leftID, right: rightID, contentStart: elements.count, contentBytes: 1, deleted: false)
        elements.append(register)
        initialValues.append(register.entries[0].value)
        place(span, loc.leaf, loc.span)
        return (leftID, rightID)
    }

    /// Deletes `count` visible items from `pos`; reports each deleted id run.
    func deleteLocal(at pos: Int, count: Int, _ report: (OpID, Int) -> Void) {
        var remaining = count
        while remaining > 0 {
            let loc = insertionPoint(pos)
            let leaf = loc.leaf
            guard loc.span < leaf.spans.count else { return }
            let si = split(leaf, loc.span, at: loc.offset)
            let s = leaf.spans[si]
            let n = min(remaining, s.length)
            split(leaf, si, at: n)
            leaf.spans[si].deleted = true
            leaf.visible -= n
            visibleCount -= n
            invalidateCache(from: leaf.index)
            report(s.id, n)
            remaining -= n
            coalesce(leaf, si)
        }
    }

    /// Merges span `si` with its neighbours in the same leaf where they continue each other.
    private func coalesce(_ leaf: SpanLeaf, _ si: Int) {
        var si = si
        if si + 1 < leaf.spans.count && leaf.spans[si].canAppend(leaf.spans[si + 1]) {
            leaf.spans[si].length += leaf.spans[si + 1].length
            leaf.spans[si].contentBytes += leaf.spans[si + 1].contentBytes
            leaf.spans.remove(at: si + 1)
        }
        if si > 0 && leaf.spans[si - 1].canAppend(leaf.spans[si]) {
            leaf.spans[si - 1].length += leaf.spans[si].length
            leaf.spans[si - 1].contentBytes += leaf.spans[si].contentBytes
            leaf.spans.remove(at: si)
            si -= 1
        }
    }

    // MARK: Remote edits

    /// Deletes items `target ..< target+count` by id. Items already deleted stay deleted.
    /// `report`, if given, hears each run of them that was visible, as (its visible index
    /// just before the run is deleted, its length), in the order they go.
    func deleteByID(_ target: OpID, count: Int, _ report: ((Int, Int) -> Void)? = nil) throws {
        var c = target.counter
        let end = target.counter + count
        while c < end {
            guard let loc = locate(OpID(counter: c, actor: target.actor)) else {
                throw CRDTError(.malformed, "delete of unknown item \(c)")
            }
            let index = report == nil ? 0 : visibleIndex(of: loc)
            let leaf = loc.leaf
            let si = split(leaf, loc.span, at: loc.offset)
            let s = leaf.spans[si]
            let n = min(end - c, s.length)
            split(leaf, si, at: n)
            if !s.deleted {
                report?(index, n)
                leaf.spans[si].deleted = true
                leaf.visible -= n
                visibleCount -= n
                invalidateCache(from: leaf.index)
            }
            coalesce(leaf, si)
            c += n
        }
    }

    /// Integrates a remote insert run (first item's origins given) in its converged place.
    /// `actorLess(a, b)` orders actor indices by their global bytes.
    func integrate(_ new: Span, actorLess: (Int32, Int32) -> Bool) throws {
        let leftLoc: Location?
        if new.left.isNone {
            leftLoc = nil
        } else {
            guard let l = locate(new.left) else { throw CRDTError(.malformed, "unknown left origin") }
            leftLoc = l
        }
        let rightLoc: Location?
        if new.right.isNone {
            rightLoc = nil
        } else {
            guard let r = locate(new.right) else { throw CRDTError(.malformed, "unknown right origin") }
            rightLoc = r
        }
        let leftOrder = leftLoc.map { $0.order() } ?? (-1, 0, 0)
        let rightOrder = rightLoc.map { $0.order() } ?? (Int.max, 0, 0)

        // Start right after the left origin.
        var cur: Location
        if let l = leftLoc {
            cur = Location(leaf: l.leaf, span: l.span, offset: l.offset + 1)
        } else {
            cur = Location(leaf: leaves[0], span: 0, offset: 0)
        }
        normalize(&cur)
        var dest = cur
        var scanning = false
        while true {
            if !scanning { dest = cur }
            if cur.span >= cur.leaf.spans.count { break }  // end of sequence
            if let r = rightLoc, cur.order() == r.order() { break }
            let s = cur.leaf.spans[cur.span]
            let oleftID = cur.offset == 0 ? s.left : s.id.advanced(by: cur.offset - 1)
            let oleftOrder: (Int, Int, Int)
            if oleftID.isNone {
                oleftOrder = (-1, 0, 0)
            } else if cur.offset > 0 {
                oleftOrder = (cur.leaf.index, cur.span, cur.offset - 1)
            } else {
                guard let ol = locate(oleftID) else { throw CRDTError(.malformed, "unknown origin in state") }
                oleftOrder = ol.order()
            }
            if oleftOrder < leftOrder { break }
            if oleftOrder == leftOrder {
                let orightOrder: (Int, Int, Int)
                if s.right.isNone {
                    orightOrder = (Int.max, 0, 0)
                } else {
                    guard let orl = locate(s.right) else { throw CRDTError(.malformed, "unknown origin in state") }
                    orightOrder = orl.order()
                }
                if orightOrder < rightOrder {
                    scanning = true
                } else if orightOrder == rightOrder {
                    if actorLess(new.id.actor, s.id.actor) { break }
                    scanning = false
                } else {
                    scanning = false
                }
            }
            // Advance past this item; the rest of its span has left origin inside the span
            // (greater than ours), so skip it, stopping at the right origin if it is there.
            advancePastItem(&cur, stopAt: rightLoc, scanning: scanning, dest: &dest)
        }
        let si = split(dest.leaf, dest.span, at: dest.offset)
        place(new, dest.leaf, si)
    }

    /// Moves `cur` from the item it is on to the next item with its own decision point:
    /// the next span start, or the right origin if it lies inside the current span.
    private func advancePastItem(_ cur: inout Location, stopAt right: Location?, scanning: Bool, dest: inout Location) {
        if let r = right, r.leaf === cur.leaf, r.span == cur.span, r.offset > cur.offset {
            if !scanning { dest = Location(leaf: cur.leaf, span: cur.span, offset: r.offset) }
            cur.offset = r.offset
            return
        }
        cur.span += 1
        cur.offset = 0
        normalize(&cur)
    }

    /// Moves a location that points past the end of its span or leaf to the next real item.
    @inline(__always)
    private func normalize(_ loc: inout Location) {
        while true {
            if loc.span < loc.leaf.spans.count {
                if loc.offset < loc.leaf.spans[loc.span].length { return }
                loc.span += 1
                loc.offset = 0
                continue
            }
            let next = loc.leaf.index + 1
            if next >= leaves.count { return }  // end: stays at (last leaf, count, 0)
            loc = Location(leaf: leaves[next], span: 0, offset: 0)
        }
    }

    /// Appends content for a remote insert and returns its start offset.
    func appendText(_ bytes: [UInt8]) -> Int {
        let start = utf8.count
        utf8.append(contentsOf: bytes)
        return start
    }

    func appendElement(_ r: Register) -> Int {
        elements.append(r)
        initialValues.append(r.entries[0].value)
        return elements.count - 1
    }

    // MARK: Bulk load

    private func buildIndex() {
        indexBuilt = true
        var byActor: [Int32: [IDIndex.Entry]] = [:]
        for leaf in leaves {
            for s in leaf.spans { byActor[s.id.actor, default: []].append(IDIndex.Entry(start: s.id.counter, leaf: leaf)) }
        }
        storedIndex = byActor.mapValues { entries in
            IDIndex(sorted: entries.sorted { $0.start < $1.start })
        }
    }

    /// Replaces the contents with spans already in document order (from a saved file).
    func load(spans: [Span]) {
        leaves = []
        storedIndex = [:]
        indexBuilt = false
        visibleCount = 0
        totalCount = 0
        cacheLeaf = -1
        var i = 0
        let fill = max(1, leafCapacity * 3 / 4)
        repeat {
            let chunk = Array(spans[i..<min(i + fill, spans.count)])
            let leaf = SpanLeaf(spans: chunk, index: leaves.count)
            leaves.append(leaf)
            visibleCount += leaf.visible
            totalCount += leaf.total
            i += fill
        } while i < spans.count
    }
}

extension SequenceState {
    /// The UTF-8 bytes of the single text item at `loc`.
    func scalarBytes(at loc: Location) -> [UInt8] {
        let s = loc.leaf.spans[loc.span]
        var b = s.contentStart
        var k = 0
        func width(_ c: UInt8) -> Int { c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4 }
        while k < loc.offset {
            b += width(utf8[b])
            k += 1
        }
        return Array(utf8[b..<b + width(utf8[b])])
    }
}

extension SequenceState {
    /// Verifies the structure's internal invariants (counts, leaf indices, id index);
    /// returns a description of the first violation. Used by tests.
    func invariantViolation() -> String? {
        var v = 0
        var t = 0
        for (i, leaf) in leaves.enumerated() {
            if leaf.index != i { return "leaf \(i) has index \(leaf.index)" }
            var lv = 0
            var lt = 0
            for s in leaf.spans {
                lv += s.visibleLength
                lt += s.length
                if s.length <= 0 { return "empty span" }
                for k in [0, s.length - 1] {
                    guard let loc = locate(s.id.advanced(by: k)) else { return "span \(s.id) not locatable" }
                    if loc.leaf !== leaf { return "span \(s.id) located in wrong leaf" }
                }
            }
            if lv != leaf.visible || lt != leaf.total { return "leaf \(i) counts \(leaf.visible)/\(leaf.total) actual \(lv)/\(lt)" }
            v += lv
            t += lt
        }
        if v != visibleCount { return "visibleCount \(visibleCount) actual \(v)" }
        return nil
    }
}
