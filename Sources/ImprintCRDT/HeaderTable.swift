/// The change headers of a payload as they are decoded, checked one by one, whatever the
/// layout they were stored in (one entry per change in versions 1 to 4, runs of changes in
/// version 5: `ChangeRuns`), kept as `LoadedHistory` keeps them (runs, each change's op
/// count as its column holds it, and the time column).
///
/// Guarantees, checked for every change in application order (by `append`, or for the rest
/// of a version 5 run by `appendRunRest`): each actor's changes get consecutive sequence
/// numbers from 1 (at most `Int32.max`), their counters ascend without overlapping
/// (`startOp` in `1...ChangeCoding.maxOpCount`), and every dependency names an earlier
/// change. Memory grows with the changes appended and the columns given, which the callers
/// bound by their bytes, never by a declared count.
struct HeaderTable {
    private let actorCount: Int
    private(set) var history: LoadedHistory
    private var seqOfActor: [Int]
    private var lastOfActor: [Int]
    private var lastMaxOfActor: [Int]
    /// Whether a change is named in another's dependency list (a run's implicit dependencies,
    /// each change after the first on the one before it, are not marked: only a run's last
    /// change can be a head).
    private var isDependency: [Bool]
    private var maxCounter = 0
    private var declaredOps = 0
    /// The number of changes appended so far (the index of the next).
    private(set) var count = 0
    /// The counter ranges, fed as changes are appended.
    private var ranges = ChangeRanges.Builder()

    /// What the headers imply besides themselves (the history's heads, each actor's last
    /// change, the counter ranges) once every change is appended.
    struct Decoded {
        var ranges: ChangeRanges
        var seqOfActor: [Int]
        var lastOfActor: [Int]
        /// The changes no other change depends on, ascending.
        var heads: [Int]
        var maxCounter: Int
        var declaredOps: Int
    }

    /// A table for the changes whose op counts (each already checked to be at most
    /// `ChangeCoding.maxOpCount`) are `opCounts` (decoded from a column, so bounded by its
    /// bytes) and whose time column `times` holds exactly one signed varint per change
    /// (checked by the caller), of actors `0 ..< actorCount`, filling `history` with `runs`
    /// runs (bounded by the caller by their bytes).
    init(actorCount: Int, opCounts: [Int], times: ByteReader, runs: Int, into history: LoadedHistory) {
        self.actorCount = actorCount
        self.history = history
        seqOfActor = [Int](repeating: 0, count: actorCount)
        lastOfActor = [Int](repeating: -1, count: actorCount)
        lastMaxOfActor = [Int](repeating: 0, count: actorCount)
        isDependency = [Bool](repeating: false, count: opCounts.count)
        self.history.opCounts = opCounts
        self.history.times = times
        self.history.dependencies.reserveCapacity(opCounts.count)
        self.history.runs.reserveCapacity(min(runs, opCounts.count))
    }

    /// The number of changes the table is for.
    var capacity: Int { isDependency.count }

    /// Adds a dependency of the next change (to append with `append`): change `count − back`.
    @inline(__always)
    mutating func addDependency(back: Int) throws {
        let i = count
        guard back >= 1, back <= i else { throw CRDTError(.malformed, back < 1 ? "dependency on itself" : "dependency before the first change") }
        history.dependencies.append(i - back)
        isDependency[i - back] = true
    }

    /// Appends the next change, of `actor` (interned, `0 ..< actorCount`), its first counter
    /// `start`, its dependencies those added since the previous `append` (from
    /// `dependencyStart` on). `seq` nil: the next of its actor (version 5 stores none);
    /// otherwise it must be.
    mutating func append(actor: Int32, seq: Int?, startOp start: Int, dependencyStart: Int) throws {
        let i = count
        guard i < capacity else { throw CRDTError(.malformed, "more changes than declared") }
        guard history.dependencies.count <= Int(Int32.max) else { throw CRDTError(.tooLarge, "too many dependencies") }
        let a = Int(actor)
        let next = seqOfActor[a] + 1
        guard seq == nil || seq == next, next <= Int(Int32.max), start >= 1, start <= ChangeCoding.maxOpCount else {
            throw CRDTError(.malformed, "change sequence out of order")
        }
        if lastOfActor[a] >= 0, start <= lastMaxOfActor[a] { throw CRDTError(.malformed, "op counters overlap") }
        let opCount = history.opCounts[i]
        let maxOp = start + opCount - 1
        history.runs.append(LoadedHistory.Run(
            actor: actor, seq: Int32(next), first: i, startOp: start,
            dependencyStart: Int32(dependencyStart), dependencyEnd: Int32(history.dependencies.count)))
        count = i + 1
        seqOfActor[a] = next
        lastOfActor[a] = i
        lastMaxOfActor[a] = maxOp
        maxCounter = max(maxCounter, maxOp)
        declaredOps += opCount
        ranges.add(actor: actor, record: i, startOp: start, maxOp: maxOp)
    }

    /// Appends the rest of a version 5 run after its first change (appended with `append`):
    /// `n` more changes of the same actor, each depending only on the change before it and
    /// taking the counters right after it.
    ///
    /// The checks of `append` for each of these changes, made once for the run where the
    /// run's shape implies them (consecutive sequence numbers and counters cannot overlap or
    /// go back), so the loop per change only adds up op counts and finds stretches of equal
    /// ones. Nothing is stored per change: the run's changes are the last run's.
    mutating func appendRunRest(count n: Int) throws {
        let first = count
        precondition(first >= 1 && !history.runs.isEmpty, "appendRunRest follows a run's first change")
        guard n >= 1 else { return }
        guard n <= capacity - first else { throw CRDTError(.malformed, "more changes than declared") }
        let actor = history.runs[history.runs.count - 1].actor
        let a = Int(actor)
        guard seqOfActor[a] + n <= Int(Int32.max) else { throw CRDTError(.malformed, "change sequence out of order") }
        var start = lastMaxOfActor[a] + 1
        var ops = 0
        // Equal changes in a row (a person typing: one op each) join the ranges a stretch at a time.
        var stretchStart = first, stretchOpStart = start, stretchWidth = -1
        try history.opCounts.withUnsafeBufferPointer { opCounts in
            for i in first..<(first + n) {
                let opCount = opCounts[i]
                guard start <= ChangeCoding.maxOpCount else { throw CRDTError(.malformed, "change sequence out of order") }
                if opCount != stretchWidth || opCount == 0 {
                    if stretchWidth >= 1 {
                        ranges.add(actor: actor, record: stretchStart, startOp: stretchOpStart, width: stretchWidth, count: i - stretchStart)
                    }
                    if opCount == 0 {
                        ranges.add(actor: actor, record: i, startOp: start, maxOp: start - 1)
                    }
                    stretchWidth = opCount == 0 ? -1 : opCount
                    stretchStart = i
                    stretchOpStart = start
                }
                start += opCount
                ops += opCount
            }
        }
        if stretchWidth >= 1 {
            ranges.add(actor: actor, record: stretchStart, startOp: stretchOpStart, width: stretchWidth, count: first + n - stretchStart)
        }
        count = first + n
        seqOfActor[a] += n
        lastOfActor[a] = first + n - 1
        lastMaxOfActor[a] = start - 1
        maxCounter = max(maxCounter, start - 1)
        declaredOps += ops
    }

    /// Sets change `index`'s message (`index` below the capacity).
    mutating func setMessage(_ message: String, of index: Int) { history.messages[index] = message }

    /// The result, once exactly the `capacity` changes are appended (throws otherwise).
    func finish() throws -> (history: LoadedHistory, decoded: Decoded) {
        guard count == capacity else { throw CRDTError(.malformed, "fewer changes than declared") }
        // Heads: runs' last changes that no dependency list names.
        var heads: [Int] = []
        let runs = history.runs
        for r in runs.indices {
            let last = (r + 1 < runs.count ? runs[r + 1].first : count) - 1
            if !isDependency[last] { heads.append(last) }
        }
        return (history, Decoded(
            ranges: ranges.build(actorCount: actorCount), seqOfActor: seqOfActor, lastOfActor: lastOfActor, heads: heads,
            maxCounter: maxCounter, declaredOps: declaredOps))
    }
}
