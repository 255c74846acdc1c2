/// A run of consecutive sequence items made by one op run: ids `id ..< id+length`
/// (same actor, consecutive counters), each item's left origin the previous item of
/// the run, all sharing one right origin, all deleted or all visible.
struct Span {
    /// Id of the first item.
    var id: OpID
    /// Number of items (code points for text, elements for lists).
    var length: Int
    /// Left origin of the first item (`OpID.none`: the sequence start).
    var left: OpID
    /// Right origin of every item (`OpID.none`: the sequence end).
    var right: OpID
    /// Text: offset of the first item's UTF-8 bytes in the content buffer. List: element index.
    var contentStart: Int
    /// Text: UTF-8 byte count of the run. List: equal to `length`.
    var contentBytes: Int
    var deleted: Bool

    @inline(__always) var visibleLength: Int { deleted ? 0 : length }
    @inline(__always) var lastID: OpID { OpID(counter: id.counter + length - 1, actor: id.actor) }

    @inline(__always) func contains(_ item: OpID) -> Bool {
        item.actor == id.actor && item.counter >= id.counter && item.counter < id.counter + length
    }

    /// Whether `next` continues this span exactly, so the two can be one span.
    @inline(__always) func canAppend(_ next: Span) -> Bool {
        next.id.actor == id.actor && next.id.counter == id.counter + length
            && next.deleted == deleted && next.right == right
            && next.left == lastID && next.contentStart == contentStart + contentBytes
    }
}

/// A leaf of the sequence tree: up to `capacity` spans with cached counts.
final class SpanLeaf {
    // Properties edits touch are `@exclusivity(unchecked)` in release builds only (see the
    // note on exclusivity at the top of `Document`).
    /// Spans per leaf before it splits.
    static let capacity = 64

    #if DEBUG
    var spans: [Span]
    #else
    @exclusivity(unchecked) var spans: [Span]
    #endif
    /// Visible items in this leaf.
    var visible: Int
    /// All items, tombstones included.
    var total: Int
    /// Position in `SequenceState.leaves`; kept current by the sequence.
    var index: Int

    init(spans: [Span], index: Int) {
        self.spans = spans
        self.index = index
        var v = 0
        var t = 0
        for s in spans {
            v += s.visibleLength
            t += s.length
        }
        visible = v
        total = t
    }

    func recount() {
        var v = 0
        var t = 0
        for s in spans {
            v += s.visibleLength
            t += s.length
        }
        visible = v
        total = t
    }
}
