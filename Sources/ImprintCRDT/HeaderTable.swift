/// The change headers of a payload as they are decoded, checked one by one, whatever the
/// layout they were stored in (one entry per change in versions 1 to 4, runs of changes in
/// version 5: `ChangeRuns`).
///
/// Guarantees, checked by `append` for every change in application order: each actor's
/// changes get consecutive sequence numbers from 1 (at most `Int32.max`), their counters
/// ascend without overlapping (`startOp` in `1...ChangeCoding.maxOpCount`), and every
/// dependency names an earlier change. Memory grows with the changes appended, which the
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

    /// Appends the next change, whose only dependency is the change before it (the rest of
    /// a version 5 run), without storing that dependency (`LoadedHistory.Header.followsPrevious`).
    @inline(__always)
    mutating func appendFollowingPrevious(actor: Int32, startOp start: Int, opCount: Int, time: Int64) throws {
        let i = count
        guard i >= 1 else { throw CRDTError(.malformed, "dependency before the first change") }
        isDependency[i - 1] = true
        try append(actor: actor, seq: nil, startOp: start, opCount: opCount, time: time, dependencies: LoadedHistory.Header.followsPrevious)
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
    }

    /// Sets change `index`'s message (`index` below the capacity).
    mutating func setMessage(_ message: String, of index: Int) { history.messages[index] = message }

    /// The result, once exactly the `capacity` changes are appended (throws otherwise).
    func finish() throws -> (history: LoadedHistory, decoded: Decoded) {
        guard count == isDependency.count else { throw CRDTError(.malformed, "fewer changes than declared") }
        let headers = history.headers
        let ranges = ChangeRanges(actorCount: actorCount, changes: headers.indices) { (headers[$0].actor, headers[$0].startOp, headers[$0].maxOp) }
        return (history, Decoded(
            ranges: ranges, seqOfActor: seqOfActor, lastOfActor: lastOfActor, isDependency: isDependency,
            maxCounter: maxCounter, declaredOps: declaredOps))
    }
}
