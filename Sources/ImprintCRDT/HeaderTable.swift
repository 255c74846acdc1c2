/// The change headers of a payload as they are decoded, checked one by one, whatever the
/// layout they were stored in (one entry per change in versions 1 to 4, runs of changes in
/// version 5: `ChangeRuns`).
///
/// Guarantees, checked for every change in application order (by `append`, or for the rest
/// of a version 5 run by `appendRunRest`): each actor's changes get consecutive sequence
/// numbers from 1 (at most `Int32.max`), their counters ascend without overlapping
/// (`startOp` in `1...ChangeCoding.maxOpCount`), and every dependency names an earlier
/// change. Memory grows with the changes appended, which the
/// callers bound by the bytes of their columns, never by a declared count.
struct HeaderTable {
    private let actorCount: Int
    private(set) var history: LoadedHistory
    private var seqOfActor: [Int]
    private var lastOfActor: [Int]
    private var lastMaxOfActor: [Int]
    private var isDependency: [Bool]
    private var maxCounter = 0
    private var declaredOps = 0
    /// The counter ranges, fed as changes are appended.
    private var ranges = ChangeRanges.Builder()

    /// What the headers imply besides themselves (the history's heads, each actor's last
    /// change, the counter ranges) once every change is appended.
    struct Decoded {
        var ranges: ChangeRanges
        var seqOfActor: [Int]
        var lastOfActor: [Int]
        var isDependency: [Bool]
        var maxCounter: Int
        var declaredOps: Int
    }

    /// A table for `capacity` changes (already bounded by the caller by the bytes that hold
    /// them) of actors `0 ..< actorCount`, filling `history`'s headers.
    init(actorCount: Int, capacity: Int, into history: LoadedHistory) {
        self.actorCount = actorCount
        self.history = history
        seqOfActor = [Int](repeating: 0, count: actorCount)
        lastOfActor = [Int](repeating: -1, count: actorCount)
        lastMaxOfActor = [Int](repeating: 0, count: actorCount)
        isDependency = [Bool](repeating: false, count: capacity)
        self.history.headers.reserveCapacity(capacity)
        self.history.dependencies.reserveCapacity(capacity)
    }

    /// The number of changes appended so far (the index of the next).
    var count: Int { history.headers.count }

    /// The last change of `actor` appended so far, if any, and its last counter.
    @inline(__always)
    func last(of actor: Int32) -> (change: Int, maxOp: Int)? {
        let a = Int(actor)
        return lastOfActor[a] >= 0 ? (lastOfActor[a], lastMaxOfActor[a]) : nil
    }

    /// Adds a dependency of the next change (to append with `append`): change `count − back`.
    @inline(__always)
    mutating func addDependency(back: Int) throws {
        let i = count
        guard back >= 1, back <= i else { throw CRDTError(.malformed, back < 1 ? "dependency on itself" : "dependency before the first change") }
        history.dependencies.append(i - back)
        isDependency[i - back] = true
    }

    /// Appends the next change, of `actor` (interned, `0 ..< actorCount`), its dependencies
    /// those added since the previous `append`. `seq` nil: the next of its actor (version 5
    /// stores none); otherwise it must be.
    @inline(__always)
    mutating func append(actor: Int32, seq: Int?, startOp start: Int, opCount: Int, time: Int64, dependencyStart: Int) throws {
        guard history.dependencies.count <= Int(Int32.max) else { throw CRDTError(.tooLarge, "too many dependencies") }
        try append(actor: actor, seq: seq, startOp: start, opCount: opCount, time: time,
                   dependencies: (Int32(dependencyStart), Int32(history.dependencies.count)))
    }

    @inline(__always)
    private mutating func append(actor: Int32, seq: Int?, startOp start: Int, opCount: Int, time: Int64, dependencies: (Int32, Int32)) throws {
        let i = count
        guard i < isDependency.count else { throw CRDTError(.malformed, "more changes than declared") }
        let a = Int(actor)
        let next = seqOfActor[a] + 1
        guard seq == nil || seq == next, next <= Int(Int32.max), start >= 1, start <= ChangeCoding.maxOpCount else {
            throw CRDTError(.malformed, "change sequence out of order")
        }
        if lastOfActor[a] >= 0, start <= lastMaxOfActor[a] { throw CRDTError(.malformed, "op counters overlap") }
        let header = LoadedHistory.Header(
            actor: actor, seq: Int32(next), startOp: start, opCount: opCount, time: time,
            dependencyStart: dependencies.0, dependencyEnd: dependencies.1)
        history.headers.append(header)
        seqOfActor[a] = next
        lastOfActor[a] = i
        lastMaxOfActor[a] = header.maxOp
        maxCounter = max(maxCounter, header.maxOp)
        declaredOps += opCount
        ranges.add(actor: actor, record: i, startOp: start, maxOp: header.maxOp)
    }

    /// Appends the rest of a version 5 run after its first change (appended with `append`):
    /// one more change of the same actor for each of `opCounts` (with the time delta at the
    /// same position of `timeDeltas`; op counts already checked to be at most
    /// `ChangeCoding.maxOpCount`), each depending only on the change before it and taking
    /// the counters right after it. Returns the last change's time.
    ///
    /// The checks of `append` for each of these changes (and that each depends on the one
    /// before it, stored nowhere: `LoadedHistory.Header.followsPrevious`), made once for the
    /// run where the run's shape implies them (consecutive sequence numbers and counters
    /// cannot overlap or go back), so the loops per change only add and store.
    mutating func appendRunRest(opCounts: UnsafeBufferPointer<Int>, timeDeltas: UnsafeBufferPointer<Int64>) throws -> Int64 {
        let first = count, n = opCounts.count
        precondition(first >= 1 && timeDeltas.count == n, "appendRunRest follows a run's first change")
        guard n >= 1 else { return history.headers[first - 1].time }
        guard n <= isDependency.count - first else { throw CRDTError(.malformed, "more changes than declared") }
        let previous = history.headers[first - 1]
        let actor = previous.actor
        let a = Int(actor)
        guard seqOfActor[a] + n <= Int(Int32.max) else { throw CRDTError(.malformed, "change sequence out of order") }
        var start = previous.maxOp + 1
        var ops = 0
        // Equal changes in a row (a person typing: one op each) join the ranges a stretch at a time.
        var stretchStart = first, stretchOpStart = start, stretchWidth = -1
        for k in 0..<n {
            let opCount = opCounts[k]
            guard start <= ChangeCoding.maxOpCount else { throw CRDTError(.malformed, "change sequence out of order") }
            if opCount != stretchWidth || opCount == 0 {
                if stretchWidth >= 1 {
                    ranges.add(actor: actor, record: stretchStart, startOp: stretchOpStart, width: stretchWidth, count: first + k - stretchStart)
                }
                if opCount == 0 {
                    ranges.add(actor: actor, record: first + k, startOp: start, maxOp: start - 1)
                }
                stretchWidth = opCount == 0 ? -1 : opCount
                stretchStart = first + k
                stretchOpStart = start
            }
            start += opCount
            ops += opCount
        }
        if stretchWidth >= 1 {
            ranges.add(actor: actor, record: stretchStart, startOp: stretchOpStart, width: stretchWidth, count: first + n - stretchStart)
        }
        // Stored in one call: `append(contentsOf:)` writes a sequence of known length straight
        // into the reserved storage (one append per change stored the array's count each time).
        history.headers.append(contentsOf: RunHeaders(previous: previous, opCounts: opCounts, timeDeltas: timeDeltas))
        isDependency.withUnsafeMutableBufferPointer { d in
            (d.baseAddress! + first - 1).update(repeating: true, count: n)
        }
        let last = history.headers[first + n - 1]
        seqOfActor[a] = Int(last.seq)
        lastOfActor[a] = first + n - 1
        lastMaxOfActor[a] = last.maxOp
        maxCounter = max(maxCounter, last.maxOp)
        declaredOps += ops
        return last.time
    }

    /// The headers of the rest of a run, following `previous` (the run's first change).
    private struct RunHeaders: Sequence, IteratorProtocol {
        var previous: LoadedHistory.Header
        let opCounts: UnsafeBufferPointer<Int>
        let timeDeltas: UnsafeBufferPointer<Int64>
        var k = 0

        var underestimatedCount: Int { opCounts.count - k }

        @inline(__always)
        mutating func next() -> LoadedHistory.Header? {
            guard k < opCounts.count else { return nil }
            previous = LoadedHistory.Header(
                actor: previous.actor, seq: previous.seq + 1, startOp: previous.startOp + previous.opCount, opCount: opCounts[k],
                time: previous.time &+ timeDeltas[k],
                dependencyStart: LoadedHistory.Header.followsPrevious.0, dependencyEnd: LoadedHistory.Header.followsPrevious.1)
            k += 1
            return previous
        }
    }

    /// Sets change `index`'s message (`index` below the capacity).
    mutating func setMessage(_ message: String, of index: Int) { history.messages[index] = message }

    /// The result, once exactly the `capacity` changes are appended (throws otherwise).
    func finish() throws -> (history: LoadedHistory, decoded: Decoded) {
        guard count == isDependency.count else { throw CRDTError(.malformed, "fewer changes than declared") }
        return (history, Decoded(
            ranges: ranges.build(actorCount: actorCount), seqOfActor: seqOfActor, lastOfActor: lastOfActor, isDependency: isDependency,
            maxCounter: maxCounter, declaredOps: declaredOps))
    }
}
