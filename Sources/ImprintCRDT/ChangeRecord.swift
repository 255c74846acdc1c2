/// A change as the document holds it: header, ops with document-local actor indices,
/// and (once sealed) its hash and canonical bytes.
final class ChangeRecord {
    // Properties edits touch are `@exclusivity(unchecked)` in release builds only (see the
    // note on exclusivity at the top of `Document`).
    let actor: Int32
    let seq: Int
    let startOp: Int
    /// Counters consumed: the sum of the ops' widths.
    var opCount: Int
    let time: Int64
    let message: String?
    /// Indices of the dependencies in `Document.records`.
    let deps: [Int]
    #if DEBUG
    var ops: [Op]
    #else
    @exclusivity(unchecked) var ops: [Op]
    #endif
    /// Set once the change is sealed; a sealed change never changes again.
    var hash: ChangeHash?
    var bytes: [UInt8]?

    init(actor: Int32, seq: Int, startOp: Int, opCount: Int, time: Int64, message: String?, deps: [Int], ops: [Op]) {
        self.actor = actor
        self.seq = seq
        self.startOp = startOp
        self.opCount = opCount
        self.time = time
        self.message = message
        self.deps = deps
        self.ops = ops
    }

    var maxOp: Int { startOp + opCount - 1 }

    /// Appends a local op, extending the previous op when it continues it (typing, backspacing).
    /// Records a local text insert, extending the previous insert run in place when the new
    /// text continues it (typing), so no byte buffer is allocated per keystroke.
    func appendText(obj: OpID, id: OpID, left: OpID, right: OpID, text: String, count: Int) {
        if let last = ops.last, last.obj == obj, case .insertText(let l, let r, _, let n) = last.action,
            r == right, left == last.id.advanced(by: n - 1), left.actor == id.actor, last.id.counter + n == id.counter
        {
            opCount += count
            var moved = ops.removeLast()
            guard case .insertText(_, _, var bytes, _) = moved.action else { return }
            moved.action = .remove(target: .none, count: 0)
            bytes.append(contentsOf: text.utf8)
            moved.action = .insertText(left: l, right: r, utf8: bytes, count: n + count)
            ops.append(moved)
            return
        }
        append(Op(id: id, obj: obj, action: .insertText(left: left, right: right, utf8: Array(text.utf8), count: count)))
    }

    /// `mergeRemoves: false` keeps remove ops as given (rebuilding a loaded change must
    /// reproduce its ops exactly; only insert runs are re-joined).
    func append(_ op: Op, mergeRemoves: Bool = true) {
        opCount += op.width
        // Typing: extend the previous insert run in place. The op is moved out of the array
        // and its payload cleared first, so the byte buffer is uniquely referenced and grows
        // without being copied on every keystroke.
        if let last = ops.last, last.obj == op.obj,
            case .insertText(let l, let r, _, let n) = last.action,
            case .insertText(let l2, let r2, let b2, let n2) = op.action,
            r == r2, l2 == last.id.advanced(by: n - 1), l2.actor == op.id.actor, last.id.counter + n == op.id.counter
        {
            var moved = ops.removeLast()
            guard case .insertText(_, _, var bytes, _) = moved.action else { return }
            moved.action = .remove(target: .none, count: 0)
            bytes.append(contentsOf: b2)
            moved.action = .insertText(left: l, right: r, utf8: bytes, count: n + n2)
            ops.append(moved)
            return
        }
        if var last = ops.last, last.obj == op.obj {
            switch (last.action, op.action) {
            case (.remove(let t, let n), .remove(let t2, let n2))
            where mergeRemoves && t.actor == t2.actor && last.id.counter + n == op.id.counter:
                if t2.counter == t.counter + n {
                    last.action = .remove(target: t, count: n + n2)
                    ops[ops.count - 1] = last
                    return
                } else if t2.counter + n2 == t.counter {
                    last.action = .remove(target: t2, count: n + n2)
                    ops[ops.count - 1] = last
                    return
                }
            default:
                break
            }
        }
        ops.append(op)
    }
}
