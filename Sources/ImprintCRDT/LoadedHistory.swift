/// The change headers of a loaded document, decoded and validated but kept flat.
///
/// Opening a document only needs its state (sequences, registers); the history is needed
/// later, if at all (sync, saving, history views). So decoding a payload (at load for
/// versions 1, 2 and 4, on first need for versions 3 and 5: ``DeferredLoad``) checks every header
/// and op into these few arrays, and `Document.records` builds the `ChangeRecord`
/// objects from them on first use. A history of 26,000 changes then costs a handful of
/// allocations to open instead of ~80,000 (and as few to free).
struct LoadedHistory {
    struct Header {
        var actor: Int32
        /// At most `Int32.max` (checked when decoded); 40 bytes a header, not 48.
        var seq: Int32
        var startOp: Int
        var opCount: Int
        var time: Int64
        /// This change's dependencies are `dependencies[dependencyStart ..< dependencyEnd]`,
        /// or (both `followsPrevious.0`) only the change before it, stored nowhere (most
        /// changes of a version 5 run: one `Int` less per change to write and page in).
        var dependencyStart: Int32
        var dependencyEnd: Int32

        static let followsPrevious: (Int32, Int32) = (-1, -1)

        var maxOp: Int { startOp + opCount - 1 }
    }

    var headers: [Header] = []
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

    var count: Int { headers.count }

    /// The `ChangeRecord`s, ops attached (insert ops are rebuilt later, see
    /// `Document.materializeInserts`).
    func makeRecords() -> [ChangeRecord] {
        var records: [ChangeRecord] = []
        records.reserveCapacity(headers.count)
        for (i, h) in headers.enumerated() {
            records.append(ChangeRecord(
                actor: h.actor, seq: Int(h.seq), startOp: h.startOp, opCount: h.opCount, time: h.time,
                message: messages[i],
                deps: h.dependencyStart < 0 ? [i - 1] : Array(dependencies[Int(h.dependencyStart)..<Int(h.dependencyEnd)]), ops: []))
        }
        for (r, op) in ops { records[r].ops.append(op) }
        for remove in removes { records[remove.record].ops.append(remove.op) }
        for (r, hash) in redactedHashes { records[r].hash = hash }
        return records
    }
}
