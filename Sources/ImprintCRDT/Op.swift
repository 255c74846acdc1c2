/// One operation in a change. Sequence inserts and deletes are run-length: a text
/// insert of n scalars, or a delete of n consecutive item ids, is a single `Op` that
/// consumes n consecutive counters starting at `id`.
struct Op: Sendable {
    var id: OpID
    /// The object the op acts on (`OpID.root` for the root map).
    var obj: OpID
    var action: Action

    enum Action: Sendable {
        /// Map put or list element overwrite. `key` is a map key, or for lists the element id.
        case put(key: Key, value: NewValue, pred: [OpID])
        /// Map key delete.
        case delete(key: Key, pred: [OpID])
        /// Adds `by` to the counter values named by `pred`.
        case increment(key: Key, by: Int64, pred: [OpID])
        /// Inserts text scalars (UTF-8 in `text`, `count` scalars) after `left`, with `right` the
        /// item that was immediately to the right when the op was made.
        case insertText(left: OpID, right: OpID, utf8: [UInt8], count: Int)
        /// Inserts one list element.
        case insertElement(left: OpID, right: OpID, value: NewValue)
        /// Deletes `count` items with ids `target ..< target+count` (same actor).
        case remove(target: OpID, count: Int)
        /// Sets or clears a mark over a range of a text (see `MarkOp`).
        case mark(MarkOp)
    }

    /// How many counters this op consumes.
    var width: Int {
        switch action {
        case .insertText(_, _, _, let n): n
        case .remove(_, let n): n
        default: 1
        }
    }
}

/// A map key or a list element id.
enum Key: Hashable, Sendable {
    case map(String)
    case element(OpID)
}
