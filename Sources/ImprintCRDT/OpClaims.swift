/// Which op claims each counter of each actor in a loaded document: nothing, an item of one
/// of its sequences, or another op (map op or remove). `load` fills it once, in time linear
/// in the number of ops, and then answers in O(1) what replaying the history will demand:
/// that no two ops share an id, and that every origin and every removed item is an item of
/// the same sequence (damaged bytes with a valid checksum could break any of these and the
/// document would still read fine, but hand out changes no replica could apply).
struct OpClaims {
    /// Per actor, per counter: 0 unclaimed, `k > 0` an item of sequence `k`, -1 another op.
    private var owners: [[Int32]]

    private let maxCounter: Int

    static let otherOp: Int32 = -1

    /// - Parameters:
    ///   - actorCount: actors are `0..<actorCount`.
    ///   - maxCounter: the largest counter any op may have.
    init(actorCount: Int, maxCounter: Int) {
        owners = Array(repeating: [], count: actorCount)
        self.maxCounter = maxCounter
    }

    /// Claims counters `start ..< start + count` of `actor` for `owner` (a sequence number
    /// `> 0`, or `otherOp`); false if one was claimed already or lies out of range.
    mutating func claim(actor: Int32, start: Int, count: Int, for owner: Int32) -> Bool {
        guard actor >= 0, Int(actor) < owners.count, start >= 1, count >= 0, start + count - 1 <= maxCounter else { return false }
        let a = Int(actor)
        if owners[a].isEmpty { owners[a] = [Int32](repeating: 0, count: maxCounter + 1) }
        return owners[a].withUnsafeMutableBufferPointer { slots in
            for c in start..<(start + count) {
                guard slots[c] == 0 else { return false }
                slots[c] = owner
            }
            return true
        }
    }

    /// Who claimed counter `counter` of `actor` (0 if nobody).
    func owner(actor: Int32, counter: Int) -> Int32 {
        guard actor >= 0, Int(actor) < owners.count, counter >= 1, counter <= maxCounter, !owners[Int(actor)].isEmpty else { return 0 }
        return owners[Int(actor)][counter]
    }
}
