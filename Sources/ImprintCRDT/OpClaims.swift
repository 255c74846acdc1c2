/// Which op claims each counter of each change in a loaded document: nothing, an item of
/// one of its sequences, or another op (map op, mark op or remove). `load` fills it once,
/// in time linear in the number of ops (and logarithmic in a change's removes), and then
/// answers what replaying the history will demand: that no two ops share an id, that every
/// op lies inside a change, and that every origin and every removed item is an item of the
/// same sequence (damaged bytes with a valid checksum could break any of these and the
/// document would still read fine, but hand out changes no replica could apply).
///
/// Memory is bounded by what the file holds, not by what its headers declare: one slot per
/// counter held by an item, a map op or a mark op (checked, before anything is allocated,
/// to be exactly the counters the changes declare besides their removes'), and one entry
/// per remove op, however many items it declares. Counters between an actor's changes cost
/// nothing.
struct OpClaims {
    /// A remove op's counters `start ... end` in its change; `through`: the counters of
    /// this and every earlier remove of the same change (they have no slots).
    private struct RemoveRange {
        var start: Int
        var end: Int
        var through: Int
    }

    private let ranges: ChangeRanges
    private let headers: [LoadedHistory.Header]
    /// Change `i`'s first slot (for its `startOp`, less the counters of removes before it).
    private let slotBase: [Int]
    /// Change `i`'s removes are `removes[removeStart[i] ..< removeStart[i + 1]]`, by counter.
    private let removeStart: [Int]
    private let removes: [RemoveRange]
    /// Per slot: 0 unclaimed, `k > 0` an item of sequence `k`, -1 another op.
    private var slots: [Int32]
    /// Per actor, where its last lookup was found among its changes (`ChangeRanges.locate`).
    private var claimHints: [Int]
    private var ownerHints: [Int]

    /// How many counters have been claimed, in all (a remove's, when it is constructed).
    private(set) var claimedCount = 0

    static let otherOp: Int32 = -1
    /// The owner of counters that no change holds (they cannot be claimed).
    static let outside = Int32.min

    /// Claims may only take counters of the changes `headers` (laid out by `ranges`), and
    /// the removes `removes` claim theirs here. Throws `.malformed`, having allocated
    /// nothing in proportion to the declared counts, unless every remove lies inside its
    /// change, no two removes of a change overlap, and the counters the changes declare
    /// (`declaredOps`, the sum of their op counts) less the removes' are exactly `heldOps`
    /// (the items, map ops and mark ops the file holds: the slots). With no two claims on
    /// one counter, `claimedCount` then equals `declaredOps` exactly when every counter of
    /// every change is claimed once.
    init(ranges: ChangeRanges, headers: [LoadedHistory.Header], removes loaded: [LoadedHistory.Remove], declaredOps: Int, heldOps: Int) throws {
        let changeCount = headers.count
        // Per change: its removes' count (then their start among `removes`) and counters.
        var start = [Int](repeating: 0, count: changeCount + 1)
        var removed = [Int](repeating: 0, count: changeCount)
        var removedTotal = 0
        for remove in loaded {
            let h = headers[remove.record]
            // Within the change (so the sums below stay within its op count: no overflow).
            guard remove.count >= 1, remove.id.counter >= h.startOp, remove.count <= h.maxOp - remove.id.counter + 1,
                removed[remove.record] <= h.opCount - remove.count
            else { throw CRDTError(.malformed, "op \(remove.id.counter) runs past its change") }
            removed[remove.record] += remove.count
            removedTotal += remove.count
            start[remove.record + 1] += 1
        }
        guard declaredOps - removedTotal == heldOps else {
            throw CRDTError(.malformed, "the changes declare \(declaredOps) ops but hold \(heldOps + removedTotal)")
        }
        for i in 0..<changeCount { start[i + 1] += start[i] }
        var next = start
        var sorted = [RemoveRange](repeating: RemoveRange(start: 0, end: -1, through: 0), count: loaded.count)
        for remove in loaded {
            sorted[next[remove.record]] = RemoveRange(start: remove.id.counter, end: remove.id.counter + remove.count - 1, through: 0)
            next[remove.record] += 1
        }
        var base = [Int](repeating: 0, count: changeCount)
        var total = 0
        for i in 0..<changeCount {
            base[i] = total
            total += headers[i].opCount - removed[i]
            guard start[i] < start[i + 1] else { continue }
            // A change's removes come in counter order from any encoder; sort them otherwise.
            if (start[i] + 1..<start[i + 1]).contains(where: { sorted[$0 - 1].start > sorted[$0].start }) {
                sorted[start[i]..<start[i + 1]].sort { $0.start < $1.start }
            }
            var through = 0
            var previousEnd = 0
            for k in start[i]..<start[i + 1] {
                guard sorted[k].start > previousEnd else { throw CRDTError(.malformed, "op \(sorted[k].start) shares its id") }
                previousEnd = sorted[k].end
                through += sorted[k].end - sorted[k].start + 1
                sorted[k].through = through
            }
        }
        self.ranges = ranges
        self.headers = headers
        slotBase = base
        removeStart = start
        removes = sorted
        slots = [Int32](repeating: 0, count: total)
        claimHints = [Int](repeating: 0, count: ranges.actorCount)
        ownerHints = claimHints
        claimedCount = removedTotal
    }

    /// The slot of counter `from` of change `change` and how many slots follow it up to
    /// `to` (exclusive, at most the change's end), or nil if a remove holds one of those
    /// counters.
    @inline(__always)
    private func slot(change: Int, from: Int, to: Int) -> Int? {
        var shift = 0
        var lo = removeStart[change], hi = removeStart[change + 1]
        if lo < hi {
            // The last remove starting before `to`.
            while lo < hi {
                let mid = (lo + hi) >> 1
                if removes[mid].start < to { lo = mid + 1 } else { hi = mid }
            }
            if lo > removeStart[change] {
                let r = removes[lo - 1]
                guard r.end < from else { return nil }
                shift = r.through
            }
        }
        return slotBase[change] + from - headers[change].startOp - shift
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
    /// change holds it, `otherOp` for a remove's).
    mutating func owner(actor: Int32, counter: Int) -> Int32 {
        guard actor >= 0, Int(actor) < ownerHints.count, counter >= 1 else { return 0 }
        guard let found = ranges.locate(actor: actor, counter: counter, hint: &ownerHints[Int(actor)]) else { return OpClaims.outside }
        guard let k = slot(change: found.record, from: counter, to: counter + 1) else { return OpClaims.otherOp }
        return slots[k]
    }

    /// Whether every counter in `start ..< start + count` of `actor` is claimed by `owner`
    /// (in time linear in `count`, stopping at the first that is not).
    mutating func all(actor: Int32, start: Int, count: Int, claimedBy owner: Int32) -> Bool {
        forEachSlotRun(actor: actor, start: start, count: count, claiming: false) { s, run in
            for k in run where s[k] != owner { return false }
            return true
        }
    }

    /// Hands `body` the slots of counters `start ..< start + count` of `actor`, one run per
    /// change they lie in, while it returns true; false (at once) if one lies outside every
    /// change or is a remove's, or if `body` returns false.
    private mutating func forEachSlotRun(
        actor: Int32, start: Int, count: Int, claiming: Bool, _ body: (UnsafeMutableBufferPointer<Int32>, Range<Int>) -> Bool
    ) -> Bool {
        guard actor >= 0, Int(actor) < claimHints.count, start >= 1, count >= 0, count <= ChangeCoding.maxOpCount else { return false }
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
