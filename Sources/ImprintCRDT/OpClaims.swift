/// Which op claims each counter of each actor in a loaded document: nothing, an item of one
/// of its sequences, or another op (map op or remove). `load` fills it once, in time linear
/// in the number of ops, and then answers in O(1) what replaying the history will demand:
/// that no two ops share an id, that every op lies inside a change, and that every origin
/// and every removed item is an item of the same sequence (damaged bytes with a valid
/// checksum could break any of these and the document would still read fine, but hand out
/// changes no replica could apply).
struct OpClaims {
    /// One row of `maxCounter + 1` slots per actor with changes, per counter: 0 unclaimed,
    /// `k > 0` an item of sequence `k`, -1 another op, `outside` a counter no change holds.
    private var slots: [Int32]
    /// Per actor, the start of its row in `slots` (-1: the actor has no changes).
    private let rowStart: [Int]

    private let maxCounter: Int

    /// How many counters have been claimed, in all.
    private(set) var claimedCount = 0

    static let otherOp: Int32 = -1
    /// The owner of counters that no change holds (they cannot be claimed).
    static let outside = Int32.min

    /// Claims may only take counters of `changes` (each `startOp ... maxOp` of its actor);
    /// every other counter reads as `outside`. With no two claims on one counter,
    /// `claimedCount` then equals the changes' total op count exactly when every counter of
    /// every change is claimed once.
    /// - Parameters:
    ///   - actorCount: actors are `0..<actorCount`.
    ///   - maxCounter: the largest counter any change holds.
    init(actorCount: Int, maxCounter: Int, changes: [LoadedHistory.Header]) {
        self.maxCounter = maxCounter
        var rows = [Int](repeating: -1, count: actorCount)
        var rowCount = 0
        for h in changes where h.actor >= 0 && Int(h.actor) < actorCount && rows[Int(h.actor)] < 0 {
            rows[Int(h.actor)] = rowCount * (maxCounter + 1)
            rowCount += 1
        }
        rowStart = rows
        slots = [Int32](repeating: OpClaims.outside, count: rowCount * (maxCounter + 1))
        slots.withUnsafeMutableBufferPointer { s in
            rows.withUnsafeBufferPointer { rows in
                for h in changes where h.actor >= 0 && Int(h.actor) < actorCount && h.opCount > 0
                    && h.startOp >= 1 && h.maxOp <= maxCounter {
                    (s.baseAddress! + rows[Int(h.actor)] + h.startOp).update(repeating: 0, count: h.opCount)
                }
            }
        }
    }

    /// Claims counters `start ..< start + count` of `actor` for `owner` (a sequence number
    /// `> 0`, or `otherOp`); false if one was claimed already or lies outside every change.
    mutating func claim(actor: Int32, start: Int, count: Int, for owner: Int32) -> Bool {
        guard actor >= 0, Int(actor) < rowStart.count, start >= 1, count >= 0, start + count - 1 <= maxCounter else { return false }
        let row = rowStart[Int(actor)]
        guard row >= 0 else { return false }
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

    /// Who claimed counter `counter` of `actor` (0 if nobody, `outside` if no change holds it).
    func owner(actor: Int32, counter: Int) -> Int32 {
        guard actor >= 0, Int(actor) < rowStart.count, counter >= 1, counter <= maxCounter else { return 0 }
        let row = rowStart[Int(actor)]
        return row < 0 ? OpClaims.outside : slots[row + counter]
    }
}
