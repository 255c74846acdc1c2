/// The history of a loaded document, decoded and validated but kept flat.
///
/// Opening a document only needs its state (sequences, registers); the history is needed
/// later, if at all (sync, saving, history views). So decoding a payload (at load for
/// versions 1, 2 and 4, on first need for versions 3 and 5: ``DeferredLoad``) checks every header
/// and op into these few arrays, and `Document.records` builds the `ChangeRecord`
/// objects from them on first use. A history of 26,000 changes then costs a handful of
/// allocations to open instead of ~80,000 (and as few to free).
struct LoadedHistory {
    /// Consecutive changes of one actor (in application order) where each after the first
    /// depends only on the change before it and takes the counters right after it: a version
    /// 5 run (`ChangeRuns`). In versions 1 to 4 every change is a run of its own. A run ends
    /// where the next begins (the last at `count`).
    struct Run {
        var actor: Int32
        /// The first change's sequence number (each next change's is one more).
        var seq: Int32
        /// The first change's index.
        var first: Int
        /// The first change's first counter.
        var startOp: Int
        /// The first change's dependencies are `dependencies[dependencyStart ..< dependencyEnd]`.
        var dependencyStart: Int32
        var dependencyEnd: Int32
    }

    var runs: [Run] = []
    /// Per change, in application order: its op count, as the column stores it, so a version 5
    /// history costs 8 bytes a change and no pass to build headers.
    var opCounts: [Int] = []
    /// The time column: per change, its time minus the previous change's (the first
    /// change's minus 0), as zig-zag varints. Checked when the history was decoded (one
    /// value per change, nothing after them) and decoded only when records are made: nothing
    /// else needs the times, and a 26,000-change history then keeps 26 KB of column instead
    /// of a 208 KB array.
    var times = ByteReader([])
    var dependencies: [Int] = []
    /// Messages by change index (most changes have none).
    var messages: [Int: String] = [:]
    /// Map and mark ops with the index of the change they belong to.
    var ops: [(record: Int, op: Op)] = []
    /// Remove ops, kept as plain values (no reference counting to copy or free them).
    var removes: [Remove] = []
    /// The hashes a redacted save names (of changes whose content it dropped), by change index.
    var redactedHashes: [(record: Int, hash: ChangeHash)] = []

    /// A remove op (`Op.Action.remove`) and the index of the change it belongs to.
    struct Remove {
        var record: Int
        var id: OpID
        var obj: OpID
        var target: OpID
        var count: Int

        var op: Op { Op(id: id, obj: obj, action: .remove(target: target, count: count)) }
    }

    var count: Int { opCounts.count }

    /// Calls `body(index, run, startOp, opCount)` for every change, in application order
    /// (`run` the run it is in).
    func forEachChange(_ body: (_ index: Int, _ run: Run, _ startOp: Int, _ opCount: Int) throws -> Void) rethrows {
        for (r, run) in runs.enumerated() {
            var start = run.startOp
            for i in run.first..<(r + 1 < runs.count ? runs[r + 1].first : count) {
                try body(i, run, start, opCounts[i])
                start += opCounts[i]
            }
        }
    }

    /// The `ChangeRecord`s, ops attached (insert ops are rebuilt later, see
    /// `Document.materializeInserts`).
    func makeRecords() -> [ChangeRecord] {
        var records: [ChangeRecord] = []
        records.reserveCapacity(count)
        var timeColumn = times
        // Checked to hold exactly one value per change when the history was decoded.
        let timeDeltas = try! timeColumn.slebs(count)
        var time: Int64 = 0
        forEachChange { i, run, start, opCount in
            time = time &+ timeDeltas[i]
            records.append(ChangeRecord(
                actor: run.actor, seq: Int(run.seq) + i - run.first, startOp: start, opCount: opCount, time: time,
                message: messages[i],
                deps: i == run.first ? Array(dependencies[Int(run.dependencyStart)..<Int(run.dependencyEnd)]) : [i - 1], ops: []))
        }
        for (r, op) in ops { records[r].ops.append(op) }
        for remove in removes { records[remove.record].ops.append(remove.op) }
        for (r, hash) in redactedHashes { records[r].hash = hash }
        return records
    }
}
