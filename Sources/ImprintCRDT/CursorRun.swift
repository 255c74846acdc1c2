/// A stretch of consecutive visible items of a list or text that one actor inserted with
/// consecutive counters: item `k` of the run (0 ≤ k < `length`) has the id
/// `(actor, counter + k)`.
///
/// ``Document/cursorRuns(_:)`` lists a sequence's visible items as runs, in order, so a
/// program outside the engine (a browser viewer, an export) can name any position by a stable
/// ``Cursor`` without holding the document: the item at visible index `i` lies in the run
/// whose cumulative start is at most `i`. Typing makes long runs, so the list stays short
/// (one entry per insertion burst, not per character).
///
/// ```swift
/// let runs = try doc.cursorRuns(body)
/// // Position 12 → the run holding it → Cursor "before:<counter + offset>@<actor hex>".
/// ```
public struct CursorRun: Hashable, Sendable {
    /// The actor that inserted every item of the run.
    public var actor: ActorID
    /// The counter of the run's first item.
    public var counter: Int
    /// How many visible items the run covers (at least 1).
    public var length: Int

    public init(actor: ActorID, counter: Int, length: Int) {
        self.actor = actor
        self.counter = counter
        self.length = length
    }

    /// The cursor just before item `offset` of this run (`side: .before`) or just after it.
    public func cursor(at offset: Int, side: Cursor.Side = .before) -> Cursor {
        Cursor(anchor: .item(actor: actor, counter: counter + offset, side: side))
    }
}

extension Document {
    /// The visible items of list or text `obj`, as maximal runs of consecutive ids, in order.
    /// Their lengths add up to ``length(_:)``; a cursor built from a run
    /// (``CursorRun/cursor(at:side:)``) resolves with ``index(of:in:)`` exactly like one from
    /// ``cursor(_:at:side:)``.
    public func cursorRuns(_ obj: ObjectID) throws -> [CursorRun] {
        let seq = try anySequence(obj)
        var runs: [CursorRun] = []
        var open: (actor: Int32, counter: Int, length: Int)?
        seq.forEachSpan { span in
            guard !span.deleted, span.length > 0 else { return }
            if let o = open, o.actor == span.id.actor, o.counter + o.length == span.id.counter {
                open!.length += span.length
            } else {
                if let o = open { runs.append(CursorRun(actor: actors[Int(o.actor)], counter: o.counter, length: o.length)) }
                open = (span.id.actor, span.id.counter, span.length)
            }
        }
        if let o = open { runs.append(CursorRun(actor: actors[Int(o.actor)], counter: o.counter, length: o.length)) }
        return runs
    }
}
