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

    /// Records a local text insert, extending the previous insert run in place when the new
    /// text continues it (typing), so no byte buffer is allocated per keystroke.
    ///
    /// The previous op is read and extended where it lies in `ops`, never copied out: a
    /// copy would retain (and, while alive, force a copy of) the run's bytes.
    func appendText(obj: OpID, id: OpID, left: OpID, right: OpID, text: String, count: Int) {
        let last = ops.count - 1
        if last >= 0, ops[last].obj == obj, left.actor == id.actor,
            case .insertText(_, let r, _, let n) = ops[last].action,
            r == right, left == ops[last].id.advanced(by: n - 1), ops[last].id.counter + n == id.counter
        {
            opCount += count
            ops[last].extendText(text.utf8, count: count)
            return
        }
        append(Op(id: id, obj: obj, action: .insertText(left: left, right: right, utf8: Array(text.utf8), count: count)))
    }

    /// Appends a local op, extending the previous op when it continues it (typing,
    /// backspacing). `mergeRemoves: false` keeps remove ops as given (rebuilding a loaded
    /// change must reproduce its ops exactly; only insert runs are re-joined).
    func append(_ op: Op, mergeRemoves: Bool = true) {
        opCount += op.width
        let last = ops.count - 1
        if last >= 0, ops[last].obj == op.obj {
            switch op.action {
            case .insertText(let l2, let r2, let b2, let n2):
                if case .insertText(_, let r, _, let n) = ops[last].action, r == r2, l2 == ops[last].id.advanced(by: n - 1),
                    l2.actor == op.id.actor, ops[last].id.counter + n == op.id.counter
                {
                    ops[last].extendText(b2, count: n2)
                    return
                }
            case .remove(let t2, let n2) where mergeRemoves:
                if case .remove(let t, let n) = ops[last].action, t.actor == t2.actor, ops[last].id.counter + n == op.id.counter {
                    if t2.counter == t.counter + n {
                        ops[last].action = .remove(target: t, count: n + n2)
                        return
                    }
                    if t2.counter + n2 == t.counter {
                        ops[last].action = .remove(target: t2, count: n + n2)
                        return
                    }
                }
            default:
                break
            }
        }
        ops.append(op)
    }
}

extension Op {
    /// Appends `utf8` (`count` scalars) to this text insert. The payload is cleared before
    /// the bytes grow, so they are uniquely referenced and grow in place.
    mutating func extendText<Bytes: Sequence<UInt8>>(_ utf8: Bytes, count: Int) {
        guard case .insertText(let left, let right, var bytes, let n) = action else { return }
        action = .remove(target: .none, count: 0)
        bytes.append(contentsOf: utf8)
        action = .insertText(left: left, right: right, utf8: bytes, count: n + count)
    }
}
