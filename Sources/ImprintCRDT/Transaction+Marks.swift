// Formatting a text: marks over ranges with Peritext semantics (see ``Mark``).
extension Transaction {
    /// Sets mark `name` to `value` on the characters in `range` of a text (replacing the
    /// value of `name` they had); an empty range does nothing.
    ///
    /// `expand` says whether text typed later at the range's edges joins it: `.after`
    /// (the default) for styles such as bold or italic, `.none` for links.
    ///
    /// ```swift
    /// try doc.change { tx in
    ///     try tx.mark(body, 0..<5, "bold")
    ///     try tx.mark(body, 6..<11, "link", .string("https://example.com"), expand: .none)
    /// }
    /// ```
    public func mark(_ obj: ObjectID, _ range: Range<Int>, _ name: String, _ value: ScalarValue = .bool(true),
                     expand: Mark.Expand = .after) throws {
        try setMark(obj, range, name, value, instance: nil, expand: expand)
    }

    /// Clears mark `name` from the characters in `range` of a text (Peritext's
    /// `removeMark`): concurrent formatting that started earlier loses to it where they
    /// overlap. With `expand: .after` (the default) text typed at the end of the cleared
    /// range stays unmarked too, as it does after clearing bold in an editor.
    public func unmark(_ obj: ObjectID, _ range: Range<Int>, _ name: String, expand: Mark.Expand = .after) throws {
        try setMark(obj, range, name, nil, instance: nil, expand: expand)
    }

    /// Adds a mark that overlaps other marks of its name instead of replacing them (a
    /// comment, a highlight) and returns its id; remove it with ``unmark(_:_:id:)``.
    ///
    /// ```swift
    /// let first = try tx.annotate(body, 0..<5, "comment", .string("c1"))
    /// let second = try tx.annotate(body, 3..<9, "comment", .string("c2"))   // both on 3..<5
    /// ```
    @discardableResult
    public func annotate(_ obj: ObjectID, _ range: Range<Int>, _ name: String, _ value: ScalarValue = .bool(true),
                         expand: Mark.Expand = .none) throws -> MarkID {
        guard !range.isEmpty else { throw CRDTError(.indexOutOfBounds, "an annotation needs a non-empty range") }
        let id = try setMark(obj, range, name, value, instance: .root, expand: expand)!
        return MarkID(counter: id.counter, actor: doc.actors[Int(id.actor)])
    }

    /// Removes the overlapping mark `id` (added by ``annotate(_:_:_:_:expand:)``) from the
    /// characters in `range`. Throws `.noSuchItem` if the text has no such mark.
    public func unmark(_ obj: ObjectID, _ range: Range<Int>, id: MarkID) throws {
        let (_, seq) = try doc.sequence(obj, text: true)
        guard let a = doc.actorIndex[id.actor],
            let added = seq.marks.first(where: { $0.id == OpID(counter: id.counter, actor: a) && $0.mark.instance == $0.id })
        else { throw CRDTError(.noSuchItem, "no mark \(id) in \(obj)") }
        try setMark(obj, range, added.mark.name, nil, instance: added.id, expand: .none)
    }

    /// Records one mark op over visible `range`; returns its id (nil for an empty range).
    @discardableResult
    private func setMark(_ obj: ObjectID, _ range: Range<Int>, _ name: String, _ value: ScalarValue?, instance: OpID?,
                         expand: Mark.Expand) throws -> OpID? {
        let (o, seq) = try doc.sequence(obj, text: true)
        guard range.lowerBound >= 0 && range.upperBound <= seq.visibleCount else {
            throw CRDTError(.indexOutOfBounds, "range \(range) of \(seq.visibleCount)")
        }
        guard !range.isEmpty else { return nil }
        let (start, end) = doc.anchors(seq, range, expand)
        return doc.markLocal(o, seq, MarkOp(start: start, end: end, name: name, value: value, instance: instance))
    }
}
