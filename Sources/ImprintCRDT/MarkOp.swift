/// A formatting op on a text object (Peritext's `addMark` / `removeMark`): sets or
/// clears one mark over the characters between two anchors.
///
/// The anchors name characters by id, not by index, so the range follows the text as
/// others edit it. An anchor sits on one side of a character (`before` or `after`), or at
/// the start or end of the text; which side decides whether text typed at the edge joins
/// the range (see `docs/crdt-semantics.md`, "Marks"):
///
/// ```
/// text "ab|cd|ef", bold on "cd":
///   expand .after  -> start before(c), end before(e): "cdX" when X is typed after d
///   expand .none   -> start before(c), end after(d):  "cd" + "X" unformatted (a link)
/// ```
///
/// A character's mark is the value of the greatest op (Lamport order) among the ops of
/// that mark whose range covers it; `value == nil` (unmark) wins by clearing it.
struct MarkOp: Sendable, Equatable {
    /// Where a mark's range starts or ends.
    enum Anchor: Hashable, Sendable {
        /// The start of the text (before every character, also those inserted at index 0 later).
        case start
        /// The end of the text (after every character, also those appended later).
        case end
        /// The gap just before a character (tombstones keep their place).
        case before(OpID)
        /// The gap just after a character.
        case after(OpID)

        var item: OpID? {
            switch self {
            case .start, .end: nil
            case .before(let id), .after(let id): id
            }
        }

        func mapItem(_ f: (OpID) -> OpID) -> Anchor {
            switch self {
            case .start, .end: self
            case .before(let id): .before(f(id))
            case .after(let id): .after(f(id))
            }
        }
    }

    var start: Anchor
    var end: Anchor
    /// The mark's name ("bold", "link", "comment").
    var name: String
    /// The value the covered characters take; nil clears the mark (unmark).
    var value: ScalarValue?
    /// For marks that may overlap (comments, highlights): the id of the op that added the
    /// mark, which names it. Marks with the same name but other instances do not compete.
    /// nil: one value of `name` per character.
    var instance: OpID?

    func mapIDs(_ f: (OpID) -> OpID) -> MarkOp {
        MarkOp(start: start.mapItem(f), end: end.mapItem(f), name: name, value: value, instance: instance.map(f))
    }
}

/// The encoding of a mark op's fields, shared by changes (op tag 7) and saved documents
/// (`docs/format.md`, "Mark ops"):
///
/// ```
/// anchor start | anchor end | string name | u8 flags (bit 0: value, bit 1: instance)
/// | [value] | [ref instance]
/// anchor = u8 0 (start) | u8 1 (end) | u8 2 ref item (before) | u8 3 ref item (after)
/// ```
/// The value is a scalar value (tags 0–9); object values are refused.
enum MarkCoding {
    static func encode(_ m: MarkOp, _ w: inout ByteWriter, ref: (OpID, inout ByteWriter) -> Void) {
        func anchor(_ a: MarkOp.Anchor) {
            switch a {
            case .start: w.byte(0)
            case .end: w.byte(1)
            case .before(let id): w.byte(2); ref(id, &w)
            case .after(let id): w.byte(3); ref(id, &w)
            }
        }
        anchor(m.start)
        anchor(m.end)
        w.string(m.name)
        w.byte((m.value == nil ? 0 : 1) | (m.instance == nil ? 0 : 2))
        if let v = m.value { ValueCoding.encode(.scalar(v), &w) }
        if let i = m.instance { ref(i, &w) }
    }

    /// Decodes the fields; `ref` reads a ref and returns nil for "none".
    static func decode(_ r: inout ByteReader, ref: (inout ByteReader) throws -> OpID?) throws -> MarkOp {
        func item() throws -> OpID {
            guard let id = try ref(&r) else { throw CRDTError(.malformed, "mark anchor without item") }
            return id
        }
        func anchor() throws -> MarkOp.Anchor {
            switch try r.byte() {
            case 0: return .start
            case 1: return .end
            case 2: return .before(try item())
            case 3: return .after(try item())
            case let tag: throw CRDTError(.malformed, "bad mark anchor \(tag)")
            }
        }
        let start = try anchor()
        let end = try anchor()
        let name = try r.string()
        let flags = try r.byte()
        guard flags <= 3 else { throw CRDTError(.malformed, "bad mark flags \(flags)") }
        var value: ScalarValue?
        if flags & 1 != 0 {
            guard case .scalar(let v) = try ValueCoding.decode(&r) else { throw CRDTError(.malformed, "mark value is an object") }
            value = v
        }
        var instance: OpID?
        if flags & 2 != 0 {
            guard let i = try ref(&r) else { throw CRDTError(.malformed, "mark instance without id") }
            instance = i
        }
        return MarkOp(start: start, end: end, name: name, value: value, instance: instance)
    }
}
