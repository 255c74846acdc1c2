/// What one local transaction did, kept so it can be inverted by ``Document/undo()`` and
/// ``Document/redo()`` (the undo stack itself is an ``UndoLog``).
struct UndoEntry {
    var steps: [UndoStep]
}

enum UndoStep {
    case mapSet(obj: OpID, key: String, previous: NewValue?, previousIncrements: Int64)
    case counter(obj: OpID, key: Key, by: Int64)
    case inserted(obj: OpID, first: OpID, count: Int)
    case deleted(obj: OpID, target: OpID, count: Int)
    /// A mark op over `start ..< end`; `previous` holds the values the mark had on the
    /// characters it covered, run by run (each run's first character and value).
    case marked(obj: OpID, start: MarkOp.Anchor, end: MarkOp.Anchor, name: String, instance: OpID?,
                previous: [(first: OpID, value: ScalarValue?)])
}

extension Document {
    func noteUndo(_ step: UndoStep) {
        undoLog.append(step)
    }

    /// Whether ``undo()`` has something to undo.
    public var canUndo: Bool { undoLog.canPop }
    /// Whether ``redo()`` has something to redo.
    public var canRedo: Bool { !redoStack.isEmpty }

    /// Undoes this replica's most recent local transaction by making a new change that
    /// inverts it (other replicas' edits are left alone). Returns false if there is nothing to undo.
    ///
    /// Inserted items are deleted; deleted text and list items are inserted again where
    /// they were (as new items); map values are put back, counters decremented. A map
    /// value that was a nested object comes back as a new empty object of the same type.
    /// Formatting (``Transaction/mark(_:_:_:_:expand:)`` and friends) is put back to the
    /// values the characters had before, by new mark ops over the same range; deleted text
    /// comes back with the marks it had.
    @discardableResult
    public func undo() throws -> Bool {
        guard let e = undoLog.popLast() else { return false }
        try invert(e)
        if let r = undoLog.popLast() { redoStack.append(r) }
        return true
    }

    /// Redoes the most recently undone transaction.
    @discardableResult
    public func redo() throws -> Bool {
        guard let e = redoStack.popLast() else { return false }
        try invert(e)
        return true
    }

    private func invert(_ e: UndoEntry) throws {
        replaying = true
        defer { replaying = false }
        try change { tx in
            for step in e.steps.reversed() {
                switch step {
                case .mapSet(let o, let key, let prev, let inc):
                    let obj = publicID(o)
                    guard objects[o] != nil else { continue }
                    switch prev {
                    case nil: try tx.delete(obj, key)
                    case .scalar(.counter(let base)): try tx.put(obj, key, .scalar(.counter(base &+ inc)))
                    case .some(let v): try tx.put(obj, key, v)
                    }
                case .counter(let o, let key, let by):
                    let obj = publicID(o)
                    switch key {
                    case .map(let k): try? tx.increment(obj, k, by: -by)
                    case .element(let el):
                        guard case .sequence(let s) = objects[o], let loc = s.locate(el),
                            !loc.leaf.spans[loc.span].deleted
                        else { continue }
                        try tx.increment(obj, at: s.visibleIndex(of: loc), by: -by)
                    }
                case .inserted(let o, let first, let count):
                    guard case .sequence(let s) = objects[o] else { continue }
                    for k in (0..<count).reversed() {
                        // Follow undo re-insertions to the item that stands for this one now.
                        var id = first.advanced(by: k)
                        var hops = 0
                        while s.isVisible(id) == false, let next = undoReplacements[id], hops < 1000 {
                            id = next
                            hops += 1
                        }
                        guard let loc = s.locate(id), !loc.leaf.spans[loc.span].deleted else { continue }
                        // Through `tx.delete`, so the patch stream hears of it.
                        try tx.delete(publicID(o), at: s.visibleIndex(of: loc))
                    }
                case .marked(let o, let start, let end, let name, let instance, let previous):
                    invertMark(obj: o, start: start, end: end, name: name, instance: instance, previous: previous)
                case .deleted(let o, let target, let count):
                    guard case .sequence(let s) = objects[o], let loc = s.locate(target) else { continue }
                    let at = s.visibleIndex(of: loc)
                    if s.isText {
                        var bytes: [UInt8] = []
                        var restored: [OpID] = []
                        for k in 0..<count {
                            guard let l = s.locate(target.advanced(by: k)) else { continue }
                            bytes += s.scalarBytes(at: l)
                            restored.append(target.advanced(by: k))
                        }
                        // Formatted text comes back with the marks it had.
                        let wanted = s.marks.isEmpty ? [] : marks(ofItems: restored, in: s)
                        let first = OpID(counter: maxCounter + 1, actor: selfActor)
                        try tx.splice(publicID(o), at: at, insert: String(decoding: bytes, as: UTF8.self))
                        for (k, old) in restored.enumerated() { undoReplacements[old] = first.advanced(by: k) }
                        if !wanted.isEmpty { restoreMarks(o, s, restored.indices.map { first.advanced(by: $0) }, wanted) }
                    } else {
                        var offset = 0
                        for k in 0..<count {
                            guard let l = s.locate(target.advanced(by: k)) else { continue }
                            let sp = l.leaf.spans[l.span]
                            let v = s.initialValues[sp.contentStart + l.offset]
                            let new = OpID(counter: maxCounter + 1, actor: selfActor)
                            try tx.insert(publicID(o), at: at + offset, v)
                            undoReplacements[target.advanced(by: k)] = new
                            offset += 1
                        }
                    }
                }
            }
        }
    }
}
