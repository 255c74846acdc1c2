/// Which change holds an op: per actor, the counter ranges of that actor's changes in
/// ascending order (a change's ops take the counters `startOp ... maxOp` of its actor).
///
/// Lookups come in runs (the ops of one change, the items of a span that run on into the
/// actor's next change), so each takes a position hint and tries it and the next range
/// before searching. After `indexCounters(budget:)`, actors with many ranges answer any
/// counter in O(1) from a table instead of searching (a history of many small concurrent
/// changes sends lookups all over the list: origins, removed items).
///
/// Consecutive changes of one actor (one after the other in the history, each taking the
/// counters after the previous one's, all with the same op count, as a person typing
/// makes them) share one range, which computes each change's index and counters from its
/// position: a history of 26,000 changes in 2,500 such runs keeps 2,500 ranges, not 26,000.
///
/// Built once from all the changes (two passes: count per actor, then place), so its
/// storage is two flat arrays however many changes and actors there are.
struct ChangeRanges {
    /// Changes `record`, `record + 1`, … of one actor, `width` counters each, together
    /// `start ... end` (an empty change: `end < start`, width 0, alone in its range).
    private struct Entry {
        var start: Int
        var end: Int
        var record: Int
        var width: Int
    }

    /// Every range, grouped by actor (actor `a`'s are
    /// `entries[actorStart[a] ..< actorStart[a + 1]]`, in the order given).
    private let entries: [Entry]
    private let actorStart: [Int]
    /// Per actor, the position among its entries of the range holding each counter (-1:
    /// none): `entryOfCounter[tableStart[a] + counter]` for `counter < tableLength[a]`;
    /// length 0 for actors that search instead.
    private var entryOfCounter: [Int32] = []
    private var tableStart: [Int] = []
    private var tableLength: [Int] = []

    /// The ranges of the changes `changes` (their record indices): `change(i)` gives change
    /// `i`'s actor (in `0..<actorCount`) and counters. Each actor's changes must come in
    /// ascending counter order.
    init(actorCount: Int, changes: Range<Int>, _ change: (Int) -> (actor: Int32, startOp: Int, maxOp: Int)) {
        // Pass 1: ranges per actor. Change `i` joins its actor's last range when it is the
        // next record, takes the next counter and has that range's width. Each actor's open
        // range keeps its change count beside it: working it out from the counters, a
        // division, took 45 % of this initializer.
        var last = [Entry](repeating: Entry(start: 0, end: -1, record: -2, width: 0), count: actorCount)
        var lastCount = [Int](repeating: 0, count: actorCount)
        func joins(_ c: (actor: Int32, startOp: Int, maxOp: Int), _ i: Int, _ e: Entry, count: Int) -> Bool {
            e.width >= 1 && c.maxOp - c.startOp + 1 == e.width && c.startOp == e.end + 1 && i == e.record + count
        }
        var starts = [Int](repeating: 0, count: actorCount + 1)
        for i in changes {
            let c = change(i)
            let a = Int(c.actor)
            if joins(c, i, last[a], count: lastCount[a]) {
                last[a].end = c.maxOp
                lastCount[a] += 1
            } else {
                last[a] = Entry(start: c.startOp, end: c.maxOp, record: i, width: max(0, c.maxOp - c.startOp + 1))
                lastCount[a] = 1
                starts[a + 1] += 1
            }
        }
        for a in 0..<actorCount { starts[a + 1] += starts[a] }
        // Pass 2: the same decisions, placing the ranges.
        var next = starts
        for a in 0..<actorCount { lastCount[a] = 0 }
        var entries = [Entry](repeating: Entry(start: 0, end: -1, record: -1, width: 0), count: starts[actorCount])
        entries.withUnsafeMutableBufferPointer { e in
            for i in changes {
                let c = change(i)
                let a = Int(c.actor)
                if next[a] > starts[a], joins(c, i, e[next[a] - 1], count: lastCount[a]) {
                    e[next[a] - 1].end = c.maxOp
                    lastCount[a] += 1
                } else {
                    e[next[a]] = Entry(start: c.startOp, end: c.maxOp, record: i, width: max(0, c.maxOp - c.startOp + 1))
                    lastCount[a] = 1
                    next[a] += 1
                }
            }
        }
        self.entries = entries
        actorStart = starts
    }

    /// The number of actors the ranges are kept for.
    var actorCount: Int { actorStart.count - 1 }

    /// Calls `body(actor, start, end)` for every range's counters (one change's, or a run
    /// of consecutive changes'), grouped by actor, each actor's in ascending order.
    func forEachRange(_ body: (Int, Int, Int) -> Void) {
        for a in 0..<actorCount {
            for k in actorStart[a]..<actorStart[a + 1] { body(a, entries[k].start, entries[k].end) }
        }
    }

    /// Builds the O(1) counter tables, once every change is appended, for actors with more
    /// than `minChanges` ranges, as long as all tables together stay within `budget`
    /// entries (the caller bounds it by the ops there are, so damaged counters cannot make
    /// the tables large). Lookups answer the same with or without them.
    mutating func indexCounters(budget: Int, minChanges: Int = 32) {
        let actorCount = actorStart.count - 1
        var lengths = [Int](repeating: 0, count: actorCount)
        var starts = [Int](repeating: 0, count: actorCount)
        var left = budget
        var total = 0
        for a in 0..<actorCount {
            let n = actorStart[a + 1] - actorStart[a]
            guard n > minChanges, n < Int(Int32.max) else { continue }
            let last = entries[actorStart[a + 1] - 1]
            guard last.end >= 0, last.end < left else { continue }
            left -= last.end + 1
            starts[a] = total
            lengths[a] = last.end + 1
            total += last.end + 1
        }
        var table = [Int32](repeating: -1, count: total)
        table.withUnsafeMutableBufferPointer { t in
            entries.withUnsafeBufferPointer { e in
                for a in 0..<actorCount where lengths[a] > 0 {
                    let base = t.baseAddress! + starts[a]
                    for k in 0..<(actorStart[a + 1] - actorStart[a]) {
                        let entry = e[actorStart[a] + k]
                        guard entry.start >= 0, entry.start <= entry.end else { continue }
                        (base + entry.start).update(repeating: Int32(k), count: entry.end - entry.start + 1)
                    }
                }
            }
        }
        entryOfCounter = table
        tableStart = starts
        tableLength = lengths
    }

    /// The index of the change holding `counter` of `actor`, and its last counter (how many
    /// counters from there on belong to it); nil if no change holds it. `hint` is a
    /// position in the actor's list, updated to where the change was found.
    @inline(__always)
    func locate(actor: Int32, counter: Int, hint: inout Int) -> (record: Int, end: Int)? {
        guard actor >= 0, Int(actor) < actorStart.count - 1 else { return nil }
        let a = Int(actor)
        let first = actorStart[a]
        if a < tableLength.count, tableLength[a] > 0 {
            guard counter >= 0, counter < tableLength[a] else { return nil }
            let k = Int(entryOfCounter[tableStart[a] + counter])
            guard k >= 0 else { return nil }
            hint = k
            return Self.change(in: entries[first + k], holding: counter)
        }
        let count = actorStart[a + 1] - first
        guard count > 0 else { return nil }
        var pos = min(max(hint, 0), count - 1)
        if counter >= entries[first + pos].start, counter <= entries[first + pos].end {
        } else if pos + 1 < count, counter >= entries[first + pos + 1].start, counter <= entries[first + pos + 1].end {
            pos += 1
        } else {
            var lo = 0
            var hi = count - 1
            while lo < hi {
                let mid = (lo + hi + 1) >> 1
                if entries[first + mid].start <= counter { lo = mid } else { hi = mid - 1 }
            }
            pos = lo
            guard counter >= entries[first + pos].start, counter <= entries[first + pos].end else { return nil }
        }
        hint = pos
        return Self.change(in: entries[first + pos], holding: counter)
    }

    /// The change of range `e` that holds `counter` (inside `e`, so `e.width >= 1`).
    @inline(__always)
    private static func change(in e: Entry, holding counter: Int) -> (record: Int, end: Int) {
        if e.width == 1 { return (e.record + counter - e.start, counter) }
        let n = (counter - e.start) / e.width
        return (e.record + n, e.start + (n + 1) * e.width - 1)
    }
}
