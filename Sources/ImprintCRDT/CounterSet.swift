/// Which op counters of each actor are taken, as one bit per counter: lets `load` check
/// that no two ops of a saved document claim the same id (damaged bytes could make a text
/// item and a map op share one; the document would read fine but replaying its history
/// would fail), in time linear in the number of ops and without sorting.
struct CounterSet {
    private var bits: [[UInt64]]

    /// - Parameters:
    ///   - actorCount: actors are `0..<actorCount`.
    ///   - maxCounter: the largest counter any op may have.
    init(actorCount: Int, maxCounter: Int) {
        bits = Array(repeating: [UInt64](repeating: 0, count: maxCounter / 64 + 1), count: actorCount)
    }

    /// Marks counters `start ..< start + count` of `actor` as taken; false if one already was
    /// (or lies outside the range the set was made for).
    mutating func claim(actor: Int32, start: Int, count: Int) -> Bool {
        guard actor >= 0, Int(actor) < bits.count, start >= 0, count >= 0 else { return false }
        let a = Int(actor)
        guard start + count <= bits[a].count * 64 else { return false }
        var c = start
        let end = start + count
        while c < end {
            let word = c >> 6, bit = c & 63
            let n = min(64 - bit, end - c)
            let mask: UInt64 = (n == 64 ? ~0 : ((1 << UInt64(n)) - 1)) << UInt64(bit)
            if bits[a][word] & mask != 0 { return false }
            bits[a][word] |= mask
            c += n
        }
        return true
    }
}
