/// Which op claims each counter of each actor in a loaded document: nothing, an item of one
/// of its sequences, or another op (map op or remove). `load` fills it once, in time linear
/// in the number of ops, and then answers in O(1) what replaying the history will demand:
/// that no two ops share an id, that every op lies inside a change, and that every origin
/// and every removed item is an item of the same sequence (damaged bytes with a valid
/// checksum could break any of these and the document would still read fine, but hand out
/// changes no replica could apply).
struct OpClaims {
    /// One row per actor with changes, covering the counters from its first change's
    /// `startOp` to its last change's `maxOp`; per counter: 0 unclaimed, `k > 0` an item of
    /// sequence `k`, -1 another op, `outside` a counter no change holds.
    private var slots: [Int32]
    /// Per actor, where counter `c` of its row is: `slots[rowBase[actor] + c]`, for `c` in
    /// `rowFirst[actor] ... rowLast[actor]` (an empty range for an actor without changes).
    private let rowBase: [Int]
    private let rowFirst: [Int]
    private let rowLast: [Int]

    /// How many counters have been claimed, in all.
    private(set) var claimedCount = 0

    static let otherOp: Int32 = -1
    /// The owner of counters that no change holds (they cannot be claimed).
    static let outside = Int32.min

    /// Claims may only take counters of the changes in `ranges` (each `startOp ... maxOp` of
    /// its actor); every other counter reads as `outside`. With no two claims on one counter,
    /// `claimedCount` then equals the changes' total op count exactly when every counter of
    /// every change is claimed once.
    init(_ ranges: ChangeRanges) {
        // Each actor's row spans its smallest to its largest counter (not every counter of
        // the document: an actor with a few changes costs a few slots). Ranges come grouped
        // by actor in ascending order, so the bounds are each actor's first and last.
        let actorCount = ranges.actorCount
        var first = [Int](repeating: 1, count: actorCount)
        var last = [Int](repeating: 0, count: actorCount)
        var seen = [Bool](repeating: false, count: actorCount)
        ranges.forEachRange { a, start, end in
            guard start >= 1, start <= end else { return }
            if !seen[a] { (seen[a], first[a]) = (true, start) }
            last[a] = max(last[a], end)
        }
        var base = [Int](repeating: 0, count: actorCount)
        var total = 0
        for a in 0..<actorCount where seen[a] {
            base[a] = total - first[a]
            total += last[a] - first[a] + 1
        }
        rowBase = base
        rowFirst = first
        rowLast = last
        var slots = [Int32](repeating: OpClaims.outside, count: total)
        slots.withUnsafeMutableBufferPointer { s in
            ranges.forEachRange { a, start, end in
                guard start >= 1, start <= end else { return }
                (s.baseAddress! + base[a] + start).update(repeating: 0, count: end - start + 1)
            }
        }
        self.slots = slots
    }

    /// Claims counters `start ..< start + count` of `actor` for `owner` (a sequence number
    /// `> 0`, or `otherOp`); false if one was claimed already or lies outside every change.
    mutating func claim(actor: Int32, start: Int, count: Int, for owner: Int32) -> Bool {
        guard actor >= 0, Int(actor) < rowBase.count, count >= 0 else { return false }
        let a = Int(actor)
        guard start >= rowFirst[a], start <= rowLast[a] - count + 1 else { return false }
        let row = rowBase[a]
        let ok = slots.withUnsafeMutableBufferPointer { s in
            for c in (row + start)..<(row + start + count) {
                guard s[c] == 0 else { return false }
                s[c] = owner
            }
            return true
        }
        if ok { claimedCount += count }
        return ok
    }

    /// Who claimed counter `counter` of `actor` (0 if nobody or `counter < 1`, `outside` if no
    /// change holds it).
    func owner(actor: Int32, counter: Int) -> Int32 {
        guard actor >= 0, Int(actor) < rowBase.count else { return 0 }
        let a = Int(actor)
        guard counter >= rowFirst[a], counter <= rowLast[a] else { return counter >= 1 ? OpClaims.outside : 0 }
        return slots[rowBase[a] + counter]
    }
}
