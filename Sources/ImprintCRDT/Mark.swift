/// A formatting mark on a run of text: bold, a link, a comment.
///
/// Marks follow Peritext (Litt, Lim, Kleppmann, van Hardenberg, 2022). A mark is set over a
/// range with ``Transaction/mark(_:_:_:_:expand:)`` and cleared with
/// ``Transaction/unmark(_:_:_:expand:)``; the range is anchored to characters, so it moves with
/// concurrent edits. Where several replicas format overlapping ranges concurrently, each
/// character takes the value of the latest op (greatest op id) that covers it, so every replica
/// reads the same marks. Read them with ``Document/spans(_:)``:
///
/// ```swift
/// try doc.change { tx in
///     try tx.splice(body, at: 0, insert: "Hello world")
///     try tx.mark(body, 0..<5, "bold")
///     try tx.mark(body, 6..<11, "link", .string("https://example.com"), expand: .none)
/// }
/// try doc.spans(body)
/// // [TextSpan("Hello", [bold: true]), TextSpan(" "), TextSpan("world", [link: "https://example.com"])]
/// ```
///
/// A mark with an ``id`` is one of several of its name that may overlap (comments,
/// highlights), added with ``Transaction/annotate(_:_:_:_:expand:)``: a comment does not
/// replace another comment, each keeps its own range.
public struct Mark: Hashable, Sendable, CustomStringConvertible {
    /// Whether text typed at a mark's edges joins it.
    ///
    /// ```
    /// "**bold**" + "X" typed right after it:
    ///   .after or .both  -> "**boldX**"    (bold, italic: the default)
    ///   .none or .before -> "**bold**X"    (links, comments)
    /// ```
    /// The choice is made when the mark is set and stored in its op (as the side of a
    /// character each end is anchored to), so all replicas grow the range alike.
    public enum Expand: Sendable, Hashable {
        /// Neither end grows.
        case none
        /// Text typed at the start joins the mark.
        case before
        /// Text typed at the end joins the mark.
        case after
        /// Text typed at either end joins the mark.
        case both
    }

    /// The mark's name, such as `"bold"`, `"link"` or `"comment"`.
    public let name: String
    /// The mark's value: `true` for plain styles, a URL for a link, a comment's id.
    public let value: ScalarValue
    /// For marks that may overlap others of their name (``Transaction/annotate(_:_:_:_:expand:)``),
    /// which one this is; nil for marks of which a character has at most one value.
    public let id: MarkID?

    public init(name: String, value: ScalarValue = .bool(true), id: MarkID? = nil) {
        self.name = name
        self.value = value
        self.id = id
    }

    public var description: String {
        "\(name)\(id.map { "#\($0)" } ?? ""): \(value)"
    }
}

/// Names one mark among several of its name that may overlap: the id of the op that added
/// it (its counter and actor, the same on every replica).
public struct MarkID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let counter: Int
    public let actor: ActorID

    public init(counter: Int, actor: ActorID) {
        self.counter = counter
        self.actor = actor
    }

    /// Lamport order: by counter, then by actor.
    public static func < (a: MarkID, b: MarkID) -> Bool {
        a.counter != b.counter ? a.counter < b.counter : a.actor < b.actor
    }

    public var description: String { "\(counter)@\(actor.hex)" }
}

extension Mark: Comparable {
    /// By name, then marks without an id first, then by id.
    public static func < (a: Mark, b: Mark) -> Bool {
        if a.name != b.name { return a.name < b.name }
        guard let x = a.id else { return b.id != nil }
        guard let y = b.id else { return false }
        return x < y
    }
}
