/// Which change holds an op: per actor, the counter ranges of that actor's changes in
/// ascending order (a change's ops take the counters `startOp ... maxOp` of its actor).
///
/// Lookups come in runs (the ops of one change, the items of a span that run on into the
/// actor's next change), so each takes a position hint and tries it and the next range
/// before searching.
struct ChangeRanges {
    private struct Entry {
        var start: Int
        var end: Int
        var record: Int
    }

    private var byActor: [[Entry]]

    init(actorCount: Int) { byActor = Array(repeating: [], count: actorCount) }

    /// Adds a change; an actor's changes must come in ascending counter order.
    mutating func append(actor: Int32, startOp: Int, maxOp: Int, record: Int) {
        byActor[Int(actor)].append(Entry(start: startOp, end: maxOp, record: record))
    }

    /// The index of the change holding `counter` of `actor`, and how many counters from
    /// there on belong to it; nil if no change holds it. `hint` is a position in the
    /// actor's list, updated to where the change was found.
    @inline(__always)
    func locate(actor: Int32, counter: Int, hint: inout Int) -> (record: Int, end: Int)? {
        guard actor >= 0, Int(actor) < byActor.count else { return nil }
        let a = Int(actor)
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
