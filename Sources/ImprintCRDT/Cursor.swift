/// A position in a list or text that stays put while others edit concurrently.
///
/// A cursor names an item by its id (actor and counter, the same on every replica) and
/// a side of it, or one of the sequence's ends. Resolve it with
/// ``Document/index(of:in:)``: inserts and deletes elsewhere move the index, not the
/// cursor. If its item is deleted, the cursor resolves to where the tombstone sits.
///
/// Text form (``description`` / ``init(_:)``): `start`, `end`, or `before:COUNTER@ACTORHEX` /
/// `after:COUNTER@ACTORHEX`. Binary form (``bytes`` / ``init(bytes:)``): tag byte (0 start,
/// 1 end, 2 before, 3 after), then for items uleb counter and length-prefixed actor bytes.
public struct Cursor: Hashable, Sendable, Codable, LosslessStringConvertible {
    /// Which side of its item a cursor sits on.
    public enum Side: UInt8, Hashable, Sendable {
        /// Just before the item: text inserted at the cursor goes before the cursor.
        case before
        /// Just after the item: text inserted at the cursor goes after the cursor.
        case after
    }

    enum Anchor: Hashable, Sendable {
        case start
        case end
        case item(actor: ActorID, counter: Int, side: Side)
    }

    let anchor: Anchor

    /// The start of the sequence (always index 0).
    public static let start = Cursor(anchor: .start)
    /// The end of the sequence (always the current length).
    public static let end = Cursor(anchor: .end)

    init(anchor: Anchor) { self.anchor = anchor }

    public var description: String {
        switch anchor {
        case .start: "start"
        case .end: "end"
        case .item(let a, let c, let s): "\(s == .before ? "before" : "after"):\(c)@\(a.hex)"
        }
    }

    /// Parses the text form; nil if malformed.
    public init?(_ description: String) {
        switch description {
        case "start": self = .start
        case "end": self = .end
        default:
            guard let colon = description.firstIndex(of: ":"), let at = description.firstIndex(of: "@"), colon < at else { return nil }
            let side: Side
            switch description[..<colon] {
            case "before": side = .before
            case "after": side = .after
            default: return nil
            }
            guard let counter = Int(description[description.index(after: colon)..<at]), counter > 0,
                let actor = ActorID(hex: String(description[description.index(after: at)...]))
            else { return nil }
            self.init(anchor: .item(actor: actor, counter: counter, side: side))
        }
    }

    /// The binary form.
    public var bytes: [UInt8] {
        var w = ByteWriter()
        switch anchor {
        case .start: w.byte(0)
        case .end: w.byte(1)
        case .item(let a, let c, let s):
            w.byte(s == .before ? 2 : 3)
            w.uleb(c)
            w.lengthPrefixed(a.bytes)
        }
        return w.bytes
    }

    /// Decodes the binary form; malformed bytes throw ``CRDTError``.
    public init(bytes: [UInt8]) throws {
        var r = ByteReader(bytes)
        switch try r.byte() {
        case 0: anchor = .start
        case 1: anchor = .end
        case let tag where tag == 2 || tag == 3:
            let c = try r.count(max: Int(Int64.max))
            guard c > 0 else { throw CRDTError(.malformed, "cursor counter 0") }
            guard let a = ActorID(bytes: Array(try r.lengthPrefixed())) else { throw CRDTError(.malformed, "bad actor in cursor") }
            anchor = .item(actor: a, counter: c, side: tag == 2 ? .before : .after)
        case let tag: throw CRDTError(.malformed, "cursor tag \(tag)")
        }
        guard r.isAtEnd else { throw CRDTError(.malformed, "trailing bytes after cursor") }
    }

    public init(from decoder: Decoder) throws {
        let s = try decoder.singleValueContainer().decode(String.self)
        guard let c = Cursor(s) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "bad cursor \(s)"))
        }
        self = c
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

extension CRDTError.Code {
    /// A cursor names an item this sequence does not hold (another object's, or not received yet).
    public static let noSuchItem = CRDTError.Code(raw: "noSuchItem")
}

extension Document {
    /// A cursor for the gap before visible item `index` of a list or text (`side: .before`,
    /// the default; at `index == length` this is ``Cursor/end``), or the gap after item
    /// `index - 1` (`side: .after`; at `index == 0` this is ``Cursor/start``).
    public func cursor(_ obj: ObjectID, at index: Int, side: Cursor.Side = .before) throws -> Cursor {
        let seq = try anySequence(obj)
        guard index >= 0 && index <= seq.visibleCount else {
            throw CRDTError(.indexOutOfBounds, "index \(index) of \(seq.visibleCount)")
        }
        let target = side == .before ? index : index - 1
        if target < 0 { return .start }
        if target >= seq.visibleCount { return .end }
        let loc = seq.insertionPoint(target)
        let id = loc.leaf.spans[loc.span].id.advanced(by: loc.offset)
        return Cursor(anchor: .item(actor: actors[Int(id.actor)], counter: id.counter, side: side))
    }

    /// The current index of `cursor` in a list or text: the number of visible items before it.
    /// Throws `.noSuchItem` if the cursor's item is not in `obj`.
    public func index(of cursor: Cursor, in obj: ObjectID) throws -> Int {
        let seq = try anySequence(obj)
        switch cursor.anchor {
        case .start: return 0
        case .end: return seq.visibleCount
        case .item(let actor, let counter, let side):
            guard let a = actorIndex[actor], let loc = seq.locate(OpID(counter: counter, actor: a)) else {
                throw CRDTError(.noSuchItem, "cursor \(cursor) names no item of \(obj)")
            }
            let before = seq.visibleIndex(of: loc)
            let visible = !loc.leaf.spans[loc.span].deleted
            return side == .after && visible ? before + 1 : before
        }
    }

    func anySequence(_ obj: ObjectID) throws -> SequenceState {
        guard case .sequence(let s) = try state(obj).1 else { throw CRDTError(.wrongObjectType, "\(obj) is not a list or text") }
        return s
    }
}
