/// Which change holds an op: per actor, the counter ranges of that actor's changes in
/// ascending order (a change's ops take the counters `startOp ... maxOp` of its actor).
///
/// Lookups come in runs (the ops of one change, the items of a span that run on into the
/// actor's next change), so each takes a position hint and tries it and the next range
/// before searching. After `indexCounters(budget:)`, actors with many changes answer any
/// counter in O(1) from a table instead of searching (a history of many small concurrent
/// changes sends lookups all over the list: origins, removed items).
struct ChangeRanges {
    private struct Entry {
        var start: Int
        var end: Int
        var record: Int
    }

    private var byActor: [[Entry]]
    /// Per actor, the position in `byActor[actor]` of the change holding each counter
    /// (-1: none); empty for actors that search instead.
    private var entryOfCounter: [[Int32]] = []

    init(actorCount: Int) { byActor = Array(repeating: [], count: actorCount) }

    /// Adds a change; an actor's changes must come in ascending counter order.
    mutating func append(actor: Int32, startOp: Int, maxOp: Int, record: Int) {
        byActor[Int(actor)].append(Entry(start: startOp, end: maxOp, record: record))
    }

    /// Builds the O(1) counter tables, once every change is appended, for actors with more
    /// than `minChanges` changes, as long as all tables together stay within `budget`
    /// entries (the caller bounds it by the ops there are, so damaged counters cannot make
    /// the tables large). Lookups answer the same with or without them.
    mutating func indexCounters(budget: Int, minChanges: Int = 32) {
        var left = budget
        entryOfCounter = byActor.map { entries in
            guard entries.count > minChanges, let last = entries.last, last.end >= 0, last.end < left,
                entries.count < Int(Int32.max) else { return [] }
            left -= last.end + 1
            var table = [Int32](repeating: -1, count: last.end + 1)
            table.withUnsafeMutableBufferPointer { t in
                for (k, e) in entries.enumerated() where e.start >= 0 && e.start <= e.end {
                    for c in e.start...e.end { t[c] = Int32(k) }
                }
            }
            return table
        }
    }

    /// The index of the change holding `counter` of `actor`, and how many counters from
    /// there on belong to it; nil if no change holds it. `hint` is a position in the
    /// actor's list, updated to where the change was found.
    @inline(__always)
    func locate(actor: Int32, counter: Int, hint: inout Int) -> (record: Int, end: Int)? {
        guard actor >= 0, Int(actor) < byActor.count else { return nil }
        let a = Int(actor)
        if a < entryOfCounter.count, !entryOfCounter[a].isEmpty {
            guard counter >= 0, counter < entryOfCounter[a].count else { return nil }
            let k = Int(entryOfCounter[a][counter])
            guard k >= 0 else { return nil }
            hint = k
            return (byActor[a][k].record, byActor[a][k].end)
        }
        let count = byActor[a].count
        guard count > 0 else { return nil }
        var pos = min(hint, count - 1)
        if counter >= byActor[a][pos].start, counter <= byActor[a][pos].end {
        } else if pos + 1 < count, counter >= byActor[a][pos + 1].start, counter <= byActor[a][pos + 1].end {
            pos += 1
        } else {
            var lo = 0
            var hi = count - 1
            while lo < hi {
                let mid = (lo + hi + 1) >> 1
                if byActor[a][mid].start <= counter { lo = mid } else { hi = mid - 1 }
            }
            pos = lo
            guard counter >= byActor[a][pos].start, counter <= byActor[a][pos].end else { return nil }
        }
        hint = pos
        return (byActor[a][pos].record, byActor[a][pos].end)
    }
}
