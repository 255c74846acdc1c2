/// Which op claims each counter of each change in a loaded document: nothing, an item of
/// one of its sequences (visible, or deleted and whether a remove has covered it yet), or
/// another op (map op, mark op or remove). `load` fills it once,
/// in time linear in the number of ops (and logarithmic in a change's removes), and then
/// answers what replaying the history will demand: that no two ops share an id, that every
/// op lies inside a change, and that every origin and every removed item is an item of the
/// same sequence (damaged bytes with a valid checksum could break any of these and the
/// document would still read fine, but hand out changes no replica could apply).
///
/// Memory is bounded by what the file holds, not by what its headers declare. Where each
/// actor's counters, from its first change's to its last's, fit in a few slots per item
/// and op decoded, each actor has one row of slots over them (O(1) lookups, one memory
/// access). Otherwise: one slot per counter held by an item, a map op or a mark op
/// (checked, before anything is allocated, to be exactly the counters the changes declare
/// besides their removes'), laid out per change, and one entry per remove op, however many
/// items it declares; counters between an actor's changes then cost nothing.
struct OpClaims {
    /// A remove op's counters `start ... end` in its change; `through`: the counters of
    /// this and every earlier remove of the same change (they have no slots).
    private struct RemoveRange {
        var start: Int
        var end: Int
        var through: Int
    }

    /// Where change `i`'s counters are among the slots, in one place (one cache line for
    /// a lookup): counter `c` (not a remove's) is slot `c + offset − shift`, `shift` the
    /// counters of the removes before `c`, which are `removes[removeStart ..< removeEnd]`,
    /// in counter order.
    private struct ChangeSlots {
        var offset: Int
        var removeStart: Int32
        var removeEnd: Int32
    }

    private let ranges: ChangeRanges
    /// Rows: actor `a`'s counter `c` in `rowFirst[a] ... rowLast[a]` is slot `rowBase[a] + c`
    /// (empty arrays when the changes are laid out one by one instead).
    private let rowBase: [Int]
    private let rowFirst: [Int]
    private let rowLast: [Int]
    /// Laid out per change (empty arrays in rows).
    private let changes: [ChangeSlots]
    private let removes: [RemoveRange]
    /// Per slot: 0 unclaimed, `k > 0` a visible item of sequence `k`, `deleted(k)` a deleted
    /// one that no remove has covered yet, `removed(k)` a deleted one that a remove covers,
    /// -1 another op (in rows also `outside`, a counter of no change).
    private var slots: [Int32]
    /// Per actor, where its last lookup was found among its changes (`ChangeRanges.locate`).
    private var claimHints: [Int]
    private var ownerHints: [Int]

    /// How many counters have been claimed, in all (a remove's, when it is constructed).
    private(set) var claimedCount = 0

    static let otherOp: Int32 = -1
    /// The owner of a deleted item of sequence `k` once a remove covers it (below -1).
    @inline(__always) static func removed(_ k: Int32) -> Int32 { -1 - k }
    /// The owner of a deleted item of sequence `k` that no remove has covered yet (just above
    /// `outside`, below every `removed(k)` for `k < maxSequences`).
    @inline(__always) static func deleted(_ k: Int32) -> Int32 { outside + k }
    /// The owner of counters that no change holds (they cannot be claimed).
    static let outside = Int32.min
    /// Sequences are numbered `1 ..< maxSequences`, so the owners above never collide.
    static let maxSequences: Int32 = 1 << 30

    /// Whether `owner` is an item of sequence `k`, deleted or not.
    @inline(__always) static func isItem(_ owner: Int32, of k: Int32) -> Bool {
        owner == k || owner == deleted(k) || owner == removed(k)
    }

    /// Claims may only take counters of the changes of `history` (laid out by `ranges`), and
    /// its removes claim theirs here. Throws `.malformed`, having allocated
    /// nothing in proportion to the declared counts, unless every remove lies inside its
    /// change, no two removes of a change overlap, and the counters the changes declare
    /// (`declaredOps`, the sum of their op counts) less the removes' are exactly `heldOps`
    /// (the items, map ops and mark ops the file holds: the slots). With no two claims on
    /// one counter, `claimedCount` then equals `declaredOps` exactly when every counter of
    /// every change is claimed once.
    init(ranges: ChangeRanges, history: LoadedHistory, declaredOps: Int, heldOps: Int) throws {
        let loaded = history.removes
        guard loaded.count < Int(Int32.max) else { throw CRDTError(.tooLarge, "too many remove ops") }
        var removedTotal = 0
        var hints = [Int](repeating: 0, count: ranges.actorCount)
        for remove in loaded {
            // Within its change (the one holding its first counter, as `record` says);
            // together within the declared ops (disjoint removes are), so the sum cannot
            // overflow.
            guard remove.count >= 1,
                  let change = ranges.locate(actor: remove.id.actor, counter: remove.id.counter, hint: &hints[max(0, Int(remove.id.actor))]),
                  change.record == remove.record, remove.count <= change.end - remove.id.counter + 1 else {
                throw CRDTError(.malformed, "op \(remove.id.counter) runs past its change")
            }
            guard remove.count <= declaredOps - removedTotal else { throw CRDTError(.malformed, "remove ops share their ids") }
            removedTotal += remove.count
        }
        // Checked before the slots are allocated: they are the items and ops decoded.
        guard declaredOps - removedTotal == heldOps else {
            throw CRDTError(.malformed, "the changes declare \(declaredOps) ops but hold \(heldOps + removedTotal)")
        }
        self.ranges = ranges
        claimHints = [Int](repeating: 0, count: ranges.actorCount)
        ownerHints = claimHints
        claimedCount = removedTotal
        // Rows, if they fit in a few slots per item and op decoded. Ranges come grouped by
        // actor in ascending order, so the bounds are each actor's first and last.
        let actorCount = ranges.actorCount
        var first = [Int](repeating: 1, count: actorCount)
        var last = [Int](repeating: 0, count: actorCount)
        var seen = [Bool](repeating: false, count: actorCount)
        ranges.forEachRange { a, start, end in
            if !seen[a] { (seen[a], first[a]) = (true, start) }
            last[a] = max(last[a], end)
        }
        var rowTotal = 0
        for a in 0..<actorCount where seen[a] { rowTotal += last[a] - first[a] + 1 }
        if rowTotal <= 4 * (heldOps + loaded.count) + 4096 {
            var base = [Int](repeating: 0, count: actorCount)
            var total = 0
            for a in 0..<actorCount where seen[a] {
                base[a] = total - first[a]
                total += last[a] - first[a] + 1
            }
            var slots = [Int32](repeating: OpClaims.outside, count: total)
            try slots.withUnsafeMutableBufferPointer { s in
                ranges.forEachRange { a, start, end in
                    (s.baseAddress! + base[a] + start).update(repeating: 0, count: end - start + 1)
                }
                for remove in loaded {
                    let row = base[Int(remove.id.actor)]
                    for k in (row + remove.id.counter)..<(row + remove.id.counter + remove.count) {
                        guard s[k] == 0 else { throw CRDTError(.malformed, "op \(remove.id.counter) shares its id") }
                        s[k] = OpClaims.otherOp
                    }
                }
            }
            (rowBase, rowFirst, rowLast) = (base, first, last)
            (changes, removes) = ([], [])
            self.slots = slots
            return
        }
        (rowBase, rowFirst, rowLast) = ([], [], [])
        // Per change: its removes' count, then where they start among `removes`.
        var changes = [ChangeSlots](repeating: ChangeSlots(offset: 0, removeStart: 0, removeEnd: 0), count: history.count)
        for remove in loaded { changes[remove.record].removeEnd += 1 }
        var placed: Int32 = 0
        for i in changes.indices {
            changes[i].removeStart = placed
            placed += changes[i].removeEnd
            changes[i].removeEnd = changes[i].removeStart
        }
        var sorted = [RemoveRange](repeating: RemoveRange(start: 0, end: -1, through: 0), count: loaded.count)
        for remove in loaded {
            sorted[Int(changes[remove.record].removeEnd)] = RemoveRange(
                start: remove.id.counter, end: remove.id.counter + remove.count - 1, through: 0)
            changes[remove.record].removeEnd += 1
        }
        var total = 0
        try history.forEachChange { i, _, startOp, opCount in
            let first = Int(changes[i].removeStart), end = Int(changes[i].removeEnd)
            var through = 0
            if first < end {
                // A change's removes come in counter order from any encoder; sorted otherwise.
                if (first + 1..<end).contains(where: { sorted[$0 - 1].start > sorted[$0].start }) {
                    sorted[first..<end].sort { $0.start < $1.start }
                }
                var previousEnd = 0
                for k in first..<end {
                    // Disjoint, each inside the change: together within its op count.
                    guard sorted[k].start > previousEnd else { throw CRDTError(.malformed, "op \(sorted[k].start) shares its id") }
                    previousEnd = sorted[k].end
                    through += sorted[k].end - sorted[k].start + 1
                    sorted[k].through = through
                }
            }
            changes[i].offset = total - startOp
            total += opCount - through
        }
        self.changes = changes
        removes = sorted
        slots = [Int32](repeating: 0, count: total)
    }

    /// The slot of counter `from` of change `change` (the slots of `from ..< to` follow it,
    /// `to` at most one past the change's end), or nil if a remove holds one of those
    /// counters.
    @inline(__always)
    private func slot(change: Int, from: Int, to: Int) -> Int? {
        let c = changes[change]
        var shift = 0
        if c.removeStart < c.removeEnd {
            // The last remove starting before `to`.
            var lo = Int(c.removeStart), hi = Int(c.removeEnd)
            while lo < hi {
                let mid = (lo + hi) >> 1
                if removes[mid].start < to { lo = mid + 1 } else { hi = mid }
            }
            if lo > Int(c.removeStart) {
                let r = removes[lo - 1]
                guard r.end < from else { return nil }
                shift = r.through
            }
        }
        return from + c.offset - shift
    }

    /// Claims counters `start ..< start + count` of `actor` for `owner` (a sequence number
    /// `> 0`, or `otherOp`); false if one was claimed already or lies outside every change
    /// (they may run on from one change of `actor` into its next).
    mutating func claim(actor: Int32, start: Int, count: Int, for owner: Int32) -> Bool {
        let ok = forEachSlotRun(actor: actor, start: start, count: count, claiming: true) { s, run in
            for k in run {
                guard s[k] == 0 else { return false }
                s[k] = owner
            }
            return true
        }
        if ok { claimedCount += count }
        return ok
    }

    /// Who claimed counter `counter` of `actor` (0 if nobody or `counter < 1`, `outside` if no
    /// change holds it, `otherOp` for a remove's), and the index of the change holding it
    /// (-1 if none, or if nobody claimed it).
    mutating func claimant(actor: Int32, counter: Int) -> (owner: Int32, change: Int) {
        guard actor >= 0, Int(actor) < ownerHints.count, counter >= 1 else { return (0, -1) }
        if !rowBase.isEmpty {
            let owner = owner(actor: actor, counter: counter)
            guard owner != 0, owner != OpClaims.outside else { return (owner, -1) }
            return (owner, ranges.locate(actor: actor, counter: counter, hint: &ownerHints[Int(actor)])?.record ?? -1)
        }
        guard let found = ranges.locate(actor: actor, counter: counter, hint: &ownerHints[Int(actor)]) else { return (OpClaims.outside, -1) }
        guard let k = slot(change: found.record, from: counter, to: counter + 1) else { return (OpClaims.otherOp, found.record) }
        return (slots[k], found.record)
    }

    /// Who claimed counter `counter` of `actor`, as `claimant` says, without finding the change
    /// that holds it where the slots are in rows (one memory access).
    mutating func owner(actor: Int32, counter: Int) -> Int32 {
        guard actor >= 0, Int(actor) < ownerHints.count, counter >= 1 else { return 0 }
        if !rowBase.isEmpty {
            let a = Int(actor)
            guard counter >= rowFirst[a], counter <= rowLast[a] else { return OpClaims.outside }
            return slots[rowBase[a] + counter]
        }
        return claimant(actor: actor, counter: counter).owner
    }

    /// Covers the items `start ..< start + count` of `actor` with a remove, if every one is a
    /// deleted item of sequence `owner` (`> 0`): returns how many no remove had covered
    /// before, or nil if one is not such an item. An item may be covered more than once
    /// (concurrent deletes of the same text).
    ///
    /// The loader claims each deleted item as `deleted(k)` and counts them; once every remove
    /// is applied, the counts returned here add up to that count exactly when every deleted
    /// item is covered, and a remove that reaches a visible item fails here. So the deleted
    /// flags are checked against the removes without another pass over the items.
    mutating func cover(actor: Int32, start: Int, count: Int, of owner: Int32) -> Int? {
        let removed = OpClaims.removed(owner), deleted = OpClaims.deleted(owner)
        var newlyCovered = 0
        let ok = forEachSlotRun(actor: actor, start: start, count: count, claiming: false) { s, run in
            for k in run {
                let slot = s[k]
                if slot == deleted {
                    s[k] = removed
                    newlyCovered += 1
                } else if slot != removed {
                    return false
                }
            }
            return true
        }
        return ok ? newlyCovered : nil
    }

    /// Hands `body` the slots of counters `start ..< start + count` of `actor`, one run per
    /// change they lie in, while it returns true; false (at once) if one lies outside every
    /// change or is a remove's, or if `body` returns false.
    private mutating func forEachSlotRun(
        actor: Int32, start: Int, count: Int, claiming: Bool, _ body: (UnsafeMutableBufferPointer<Int32>, Range<Int>) -> Bool
    ) -> Bool {
        guard actor >= 0, Int(actor) < claimHints.count, start >= 1, count >= 0, count <= ChangeCoding.maxOpCount else { return false }
        if !rowBase.isEmpty {
            let a = Int(actor)
            guard start >= rowFirst[a], start <= rowLast[a] - count + 1 else { return false }
            let first = rowBase[a] + start
            return slots.withUnsafeMutableBufferPointer { body($0, first..<(first + count)) }
        }
        var c = start
        let end = start + count
        while c < end {
            let located = claiming
                ? ranges.locate(actor: actor, counter: c, hint: &claimHints[Int(actor)])
                : ranges.locate(actor: actor, counter: c, hint: &ownerHints[Int(actor)])
            guard let found = located else { return false }
            let upto = min(end, found.end + 1)
            guard let first = slot(change: found.record, from: c, to: upto),
                slots.withUnsafeMutableBufferPointer({ body($0, first..<(first + upto - c)) })
            else { return false }
            c = upto
        }
        return true
    }
}
