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
/// Built from all the changes in one pass (`Builder`, which a loader feeds as it decodes),
/// then grouped by actor, so its storage is two flat arrays however many changes and actors
/// there are.
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
        var builder = Builder()
        for i in changes {
            let c = change(i)
            builder.add(actor: c.actor, record: i, startOp: c.startOp, maxOp: c.maxOp)
        }
        self = builder.build(actorCount: actorCount)
    }

    /// Collects the ranges as changes arrive in application order (a loader feeds it while it
    /// decodes the headers, so the changes are not walked again), then groups them by actor.
    ///
    /// A change joins the last range when it is the next record, of the same actor, takes
    /// the next counter and has that range's width; a range therefore only ever grows at the
    /// end of the list, and the list holds one entry per range, not per change.
    struct Builder {
        /// The ranges closed so far, in the order they were started.
        private var closed: [(actor: Int32, entry: Entry)] = []
        /// The last range (actor -1: none yet) and how many changes it holds.
        private var actor: Int32 = -1
        private var last = Entry(start: 0, end: -1, record: -2, width: 0)
        private var count = 0

        /// Adds change `record` of `actor` (in `0..<actorCount` of `build`), counters
        /// `startOp ... maxOp`; records must come in ascending order.
        @inline(__always)
        mutating func add(actor: Int32, record: Int, startOp: Int, maxOp: Int) {
            let width = maxOp - startOp + 1
            if actor == self.actor, last.width >= 1, width == last.width, startOp == last.end + 1, record == last.record + count {
                last.end = maxOp
                count += 1
            } else {
                start(actor: actor, Entry(start: startOp, end: maxOp, record: record, width: max(0, width)))
            }
        }

        /// Adds `count` changes of `actor` from `record` on, `width` counters each (≥ 1), the
        /// first starting at `startOp`: a stretch of equal changes in one call.
        @inline(__always)
        mutating func add(actor: Int32, record: Int, startOp: Int, width: Int, count n: Int) {
            guard n > 0 else { return }
            add(actor: actor, record: record, startOp: startOp, maxOp: startOp + width - 1)
            last.end += (n - 1) * width
            count += n - 1
        }

        private mutating func start(actor: Int32, _ entry: Entry) {
            if self.actor >= 0 { closed.append((self.actor, last)) }
            self.actor = actor
            last = entry
            count = 1
        }

        /// The ranges grouped by actor (a stable counting sort: each actor's stay in the
        /// order they were added).
        func build(actorCount: Int) -> ChangeRanges {
            var ranges = closed
            if actor >= 0 { ranges.append((actor, last)) }
            var starts = [Int](repeating: 0, count: actorCount + 1)
            for r in ranges { starts[Int(r.actor) + 1] += 1 }
            for a in 0..<actorCount { starts[a + 1] += starts[a] }
            var next = starts
            var entries = [Entry](repeating: Entry(start: 0, end: -1, record: -1, width: 0), count: ranges.count)
            entries.withUnsafeMutableBufferPointer { e in
                for r in ranges {
                    let a = Int(r.actor)
                    e[next[a]] = r.entry
                    next[a] += 1
                }
            }
            return ChangeRanges(entries: entries, actorStart: starts)
        }
    }

    private init(entries: [Entry], actorStart: [Int]) {
        self.entries = entries
        self.actorStart = actorStart
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
