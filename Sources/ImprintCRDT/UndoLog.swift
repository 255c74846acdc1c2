/// This replica's undo stack: the steps of its recent local transactions, newest last, in
/// one flat array, with where each transaction's steps start.
///
/// A transaction records into the log directly (``begin()``, ``append(_:)``, ``commit(limit:)``):
/// typing, one step per keystroke, allocates nothing per transaction, and forgetting old
/// transactions (past the limit) is one batched removal. Kept as one array per transaction,
/// the undo entries' allocations, copies and frees took ~8 % of replaying `automerge-paper`.
///
/// Only ``popLast()`` (an undo) builds an ``UndoEntry``. Invariant: outside a transaction,
/// `steps` ends where the last entry ends.
struct UndoLog {
    private var steps: [UndoStep] = []
    /// Where each entry's steps start in `steps`; entry `i` ends where `i + 1` starts.
    private var starts: [Int] = []
    /// Entries below this index are forgotten; they are dropped in batches, so that trimming
    /// costs O(1) per transaction, amortized.
    private var floor = 0
    /// Where the open transaction's steps start; nil when no transaction is recording.
    private var open: Int?

    /// Whether a transaction is recording (its steps are kept).
    var isRecording: Bool { open != nil }

    /// Whether an entry can be undone.
    var canPop: Bool { starts.count > floor }

    /// Starts recording a transaction. Inside a transaction already (a change made while
    /// another is running), the steps join the outer one.
    mutating func begin() {
        if open == nil { open = steps.count }
    }

    /// Records a step of the open transaction (none open: ignored).
    mutating func append(_ step: UndoStep) {
        if open != nil { steps.append(step) }
    }

    /// Ends the open transaction. Returns whether it recorded a step (and so became an
    /// entry). Only the newest `limit` entries can be undone.
    mutating func commit(limit: Int) -> Bool {
        guard let start = open else { return false }
        open = nil
        guard steps.count > start else { return false }
        starts.append(start)
        floor = max(floor, starts.count - max(0, limit))
        // Forgotten entries are dropped once they outnumber the kept ones (at most twice the
        // limit is held), so each transaction moves O(1) steps amortized.
        if floor > max(64, limit) {
            let cut = starts[floor]
            steps.removeFirst(cut)
            starts.removeFirst(floor)
            for i in starts.indices { starts[i] -= cut }
            floor = 0
        }
        return true
    }

    /// Removes the newest entry (nil when none can be undone).
    mutating func popLast() -> UndoEntry? {
        guard canPop, open == nil, let start = starts.popLast() else { return nil }
        let entry = UndoEntry(steps: Array(steps[start...]))
        steps.removeSubrange(start...)
        return entry
    }

    /// Forgets every entry.
    mutating func removeAll() {
        steps.removeAll()
        starts.removeAll()
        floor = 0
        open = nil
    }
}
