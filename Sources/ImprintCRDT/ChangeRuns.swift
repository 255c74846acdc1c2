/// Section 2 of a version 5 document: the change headers stored as *runs* (`docs/format.md`,
/// "Change runs").
///
/// A run is a stretch of consecutive changes (in application order) by one actor where every
/// change after the first depends on exactly the change before it and takes the counters
/// right after it. Such a run is stored once (actor, length, first `startOp`, the first
/// change's dependencies); per change only its op count and time (and, sparsely, a message).
/// Sequence numbers are not stored: each actor's changes are numbered 1, 2, … in
/// application order, which every layout requires.
///
/// ```
/// uleb changeCount | uleb runCount
/// 7 columns: run actor | run length (≥ 1) | run startOp (sleb delta from the previous run's)
///          | run deps (uleb n, uleb back × n) | opCount per change | time per change (sleb delta)
///          | messages (uleb gap, string)…
/// ```
enum ChangeRuns {
    /// The number of columns of the section.
    static let columnCount = 7
    static let columnNames = ["runActor", "runLength", "runStart", "runDeps", "opCount", "time", "messages"]

    /// Writes the section for `records` (in application order; each depends only on earlier ones).
    static func write(_ records: [ChangeRecord], to w: inout ByteWriter, encoder: Zstd.Encoder, statistics: ((String, [UInt8]) -> Void)?) {
        var cols = ColumnSet(count: columnCount)
        var runs = 0
        var prevRunStart = 0
        var prevTime: Int64 = 0
        var prevMessage = -1
        var i = 0
        while i < records.count {
            let first = records[i]
            var n = 1
            while i + n < records.count, continuesRun(records[i + n], index: i + n, after: records[i + n - 1]) { n += 1 }
            cols.columns[0].uleb(Int(first.actor))
            cols.columns[1].uleb(n)
            cols.columns[2].sleb(first.startOp - prevRunStart)
            cols.columns[3].uleb(first.deps.count)
            for d in first.deps { cols.columns[3].uleb(i - d) }
            prevRunStart = first.startOp
            for k in i..<(i + n) {
                let r = records[k]
                cols.columns[4].uleb(r.opCount)
                cols.columns[5].sleb(r.time &- prevTime)
                prevTime = r.time
                if let m = r.message {
                    cols.columns[6].uleb(k - prevMessage - 1)
                    cols.columns[6].string(m)
                    prevMessage = k
                }
            }
            runs += 1
            i += n
        }
        w.uleb(records.count)
        w.uleb(runs)
        if let statistics {
            for (k, c) in cols.columns.enumerated() { statistics("changes." + columnNames[k], c.bytes) }
        }
        cols.write(to: &w, encoder: encoder)
    }

    /// Whether `record` (change `index`) continues the run that `previous` (change `index − 1`) is in.
    private static func continuesRun(_ record: ChangeRecord, index: Int, after previous: ChangeRecord) -> Bool {
        record.actor == previous.actor && record.deps.count == 1 && record.deps[0] == index - 1
            && record.startOp == previous.maxOp + 1
    }

    /// Steps over the section without decoding it (its column framing is checked).
    static func skip(_ r: inout ByteReader, budget: Int) throws {
        _ = try r.count(max: r.remaining * 64)
        _ = try r.count(max: r.remaining * 64)
        try ColumnSet.skip(&r, count: columnCount, budget: budget)
    }

    /// Decodes and checks the section into `history` (checks of every change: `HeaderTable`).
    /// Allocation follows the bytes: the change count is bounded by the op-count column's
    /// bytes (one at least per change) and each run's length by the changes left, so a run
    /// declaring 2^40 changes is refused before anything is reserved for it.
    static func read(
        _ r: inout ByteReader, actorMap map: [Int32], actorCount: Int, budget: inout Int, decoder: Zstd.Decoder,
        into history: inout LoadedHistory
    ) throws -> HeaderTable.Decoded {
        let recordCount = try r.count(max: r.remaining * 64)
        let runCount = try r.count(max: recordCount)
        let cols = try ColumnSet.read(&r, count: columnCount, budget: &budget, decoder: decoder)
        guard recordCount <= cols[4].remaining, recordCount <= cols[5].remaining, runCount <= cols[1].remaining else {
            throw CRDTError(.malformed, "change count exceeds data")
        }
        guard runCount >= 1 || recordCount == 0 else { throw CRDTError(.malformed, "changes without runs") }
        // One op count and one time per change: the op counts decoded in one tight loop (at
        // most one value per byte, so the array is bounded by the column's bytes) and kept as
        // they are by the history; the times checked in one and kept as their column.
        var opCountColumn = cols[4], timeColumn = cols[5]
        let opCounts = try opCountColumn.counts(recordCount, max: ChangeCoding.maxOpCount)
        try timeColumn.skipSlebs(recordCount)
        var table = HeaderTable(actorCount: actorCount, opCounts: opCounts, times: cols[5], runs: runCount, into: history)
        var messageColumn = cols[6]
        var previousMessage = -1
        while !messageColumn.isAtEnd {
            let index = previousMessage + 1 + (try messageColumn.count(max: recordCount))
            guard index < recordCount else { throw CRDTError(.malformed, "message of no change") }
            table.setMessage(try messageColumn.string(), of: index)
            previousMessage = index
        }
        var actorColumn = cols[0], lengthColumn = cols[1], startColumn = cols[2], depsColumn = cols[3]
        var prevRunStart = 0
        for _ in 0..<runCount {
            let i = table.count
            let rawActor = try actorColumn.count(max: map.count)
            guard rawActor < map.count else { throw CRDTError(.malformed, "actor index out of range") }
            let length = try lengthColumn.count(max: recordCount - i)
            guard length >= 1 else { throw CRDTError(.malformed, "empty change run") }
            let start = prevRunStart &+ (try startColumn.delta())
            prevRunStart = start
            let depCount = try depsColumn.count(max: i)
            let depStart = table.history.dependencies.count
            for _ in 0..<depCount { try table.addDependency(back: try depsColumn.count(max: i)) }
            try table.append(actor: map[rawActor], seq: nil, startOp: start, dependencyStart: depStart)
            // The rest of the run: each depends on the one before and takes the next counters.
            try table.appendRunRest(count: length - 1)
        }
        guard actorColumn.isAtEnd, lengthColumn.isAtEnd, startColumn.isAtEnd, depsColumn.isAtEnd,
            opCountColumn.isAtEnd, timeColumn.isAtEnd
        else { throw CRDTError(.malformed, "trailing bytes in change runs") }
        let (decodedHistory, decoded) = try table.finish()
        history = decodedHistory
        return decoded
    }
}
