/// The editing interface handed to ``Document/change(message:time:_:)``.
///
/// Every method records ops in the document's current change and applies them at
/// once, so reads inside the transaction see the edits.
public struct Transaction {
    let doc: Document

    /// Sets `key` of a map to a scalar or a new empty object; returns the new object's id.
    @discardableResult
    public func put(_ obj: ObjectID, _ key: String, _ value: NewValue) throws -> ObjectID? {
        let (o, st) = try doc.state(obj)
        guard case .map(let m) = st else { throw CRDTError(.wrongObjectType, "\(obj) is not a map") }
        let pred = m.keys[key]?.entries.map(\.id) ?? []
        let prev = m.keys[key].flatMap { $0.winner(doc.actorLess) }
        let id = doc.localOp(obj: o, .put(key: .map(key), value: value, pred: pred))
        m.keys[key, default: Register()].overwrite(pred: pred, with: .init(id: id, value: value))
        doc.createObjectIfNeeded(id, value)
        doc.noteUndo(.mapSet(obj: o, key: key, previous: prev.map(\.value), previousIncrements: prev?.increments ?? 0))
        doc.notePatch(.put(obj: obj, key: .key(key), value: doc.value(of: value, id: id)))
        return value.objectType.map { _ in doc.publicID(id) }
    }

    /// Removes `key` from a map (no-op when absent).
    public func delete(_ obj: ObjectID, _ key: String) throws {
        let (o, st) = try doc.state(obj)
        guard case .map(let m) = st else { throw CRDTError(.wrongObjectType, "\(obj) is not a map") }
        guard let reg = m.keys[key], !reg.isEmpty else { return }
        let pred = reg.entries.map(\.id)
        let prev = reg.winner(doc.actorLess)
        _ = doc.localOp(obj: o, .delete(key: .map(key), pred: pred))
        m.keys[key]!.overwrite(pred: pred, with: nil)
        if m.keys[key]!.isEmpty { m.keys[key] = nil }
        doc.noteUndo(.mapSet(obj: o, key: key, previous: prev.map(\.value), previousIncrements: prev?.increments ?? 0))
        doc.notePatch(.delete(obj: obj, key: key))
    }

    /// Adds `by` to the counter at `key` of a map.
    public func increment(_ obj: ObjectID, _ key: String, by: Int64 = 1) throws {
        let (o, st) = try doc.state(obj)
        guard case .map(let m) = st else { throw CRDTError(.wrongObjectType, "\(obj) is not a map") }
        guard let reg = m.keys[key] else { throw CRDTError(.noSuchPath, "no counter at \(key)") }
        let pred = reg.entries.filter { if case .scalar(.counter) = $0.value { true } else { false } }.map(\.id)
        guard !pred.isEmpty else { throw CRDTError(.wrongObjectType, "\(key) is not a counter") }
        _ = doc.localOp(obj: o, .increment(key: .map(key), by: by, pred: pred))
        m.keys[key]!.increment(pred: pred, by: by)
        doc.noteUndo(.counter(obj: o, key: .map(key), by: by))
        doc.notePatch(.increment(obj: obj, key: .key(key), by: by))
    }

    /// Adds `by` to the counter element at `index` of a list.
    public func increment(_ obj: ObjectID, at index: Int, by: Int64 = 1) throws {
        let (o, seq) = try doc.sequence(obj, text: false)
        guard let (elem, ci) = seq.contentOffset(atVisible: index) else {
            throw CRDTError(.indexOutOfBounds, "index \(index) of \(seq.visibleCount)")
        }
        let pred = seq.elements[ci].entries.filter { if case .scalar(.counter) = $0.value { true } else { false } }.map(\.id)
        guard !pred.isEmpty else { throw CRDTError(.wrongObjectType, "element \(index) is not a counter") }
        _ = doc.localOp(obj: o, .increment(key: .element(elem), by: by, pred: pred))
        seq.elements[ci].increment(pred: pred, by: by)
        doc.noteUndo(.counter(obj: o, key: .element(elem), by: by))
        doc.notePatch(.increment(obj: obj, key: .index(index), by: by))
    }

    /// Inserts a value into a list at `index`; returns the new object's id for object values.
    @discardableResult
    public func insert(_ obj: ObjectID, at index: Int, _ value: NewValue) throws -> ObjectID? {
        let (o, seq) = try doc.sequence(obj, text: false)
        guard index >= 0 && index <= seq.visibleCount else {
            throw CRDTError(.indexOutOfBounds, "index \(index) of \(seq.visibleCount)")
        }
        let id = doc.nextOpID(width: 1)
        let reg = Register(entries: [.init(id: id, value: value)])
        let (l, r) = seq.insertElementLocal(at: index, id: id, register: reg)
        doc.recordLocal(Op(id: id, obj: o, action: .insertElement(left: l, right: r, value: value)))
        doc.createObjectIfNeeded(id, value)
        doc.noteUndo(.inserted(obj: o, first: id, count: 1))
        doc.notePatch(.insert(obj: obj, index: index, values: [doc.value(of: value, id: id)]))
        return value.objectType.map { _ in doc.publicID(id) }
    }

    /// Overwrites the element at `index` of a list.
    @discardableResult
    public func put(_ obj: ObjectID, at index: Int, _ value: NewValue) throws -> ObjectID? {
        let (o, seq) = try doc.sequence(obj, text: false)
        guard let (elem, ci) = seq.contentOffset(atVisible: index) else {
            throw CRDTError(.indexOutOfBounds, "index \(index) of \(seq.visibleCount)")
        }
        let pred = seq.elements[ci].entries.map(\.id)
        let id = doc.localOp(obj: o, .put(key: .element(elem), value: value, pred: pred))
        seq.elements[ci].overwrite(pred: pred, with: .init(id: id, value: value))
        doc.createObjectIfNeeded(id, value)
        doc.notePatch(.put(obj: obj, key: .index(index), value: doc.value(of: value, id: id)))
        return value.objectType.map { _ in doc.publicID(id) }
    }

    /// Deletes `count` items of a list or text from `index`.
    public func delete(_ obj: ObjectID, at index: Int, count: Int = 1) throws {
        let (o, st) = try doc.state(obj)
        guard case .sequence(let seq) = st else { throw CRDTError(.wrongObjectType, "\(obj) is not a sequence") }
        try doc.deleteLocal(o, seq, index, count)
        if count > 0 { doc.notePatch(.remove(obj: obj, index: index, count: count)) }
    }

    /// Replaces `deleteCount` code points at `index` of a text with `text`.
    public func splice(_ obj: ObjectID, at index: Int, delete deleteCount: Int = 0, insert text: String = "") throws {
        let (o, seq) = try doc.sequence(obj, text: true)
        if deleteCount > 0 {
            try doc.deleteLocal(o, seq, index, deleteCount)
            doc.notePatch(.remove(obj: obj, index: index, count: deleteCount))
        }
        if !text.isEmpty {
            guard index >= 0 && index <= seq.visibleCount else {
                throw CRDTError(.indexOutOfBounds, "index \(index) of \(seq.visibleCount)")
            }
            // One UTF-8 byte is one ASCII scalar (a keystroke), without walking the scalars.
            let n = text.utf8.count == 1 ? 1 : text.unicodeScalars.count
            let id = doc.nextOpID(width: n)
            let (l, r) = seq.insertLocal(at: index, id: id, text: text, count: n, boundaries: seq.marks.isEmpty ? nil : seq.markBoundaries())
            doc.records[doc.openRecordCandidate!].appendText(obj: o, id: id, left: l, right: r, text: text, count: n)
            doc.noteUndo(.inserted(obj: o, first: id, count: n))
            doc.notePatch(.splice(obj: obj, index: index, text: text))
            // Text typed inside or at the growing edge of a mark carries it.
            if doc.patchesWanted && !seq.marks.isEmpty {
                for p in doc.markPatches(obj, seq, index..<index + n, onlyMarked: true) { doc.notePatch(p) }
            }
        }
    }

    /// Read access inside the transaction.
    public var document: Document { doc }
}

extension NewValue {
    var objectType: ObjectType? { if case .object(let t) = self { t } else { nil } }
}

extension Document {
    /// The value a patch names for `value` written by op `id`.
    func value(of value: NewValue, id: OpID) -> Value {
        switch value {
        case .scalar(let scalar): .scalar(scalar)
        case .object(let type): .object(publicID(id), type)
        }
    }
}

extension Document {
    /// Runs `body` as one change (or as an extension of the previous local change when
    /// coalescing applies). Returns what `body` returns. If `body` throws, the ops it
    /// already applied stay applied and recorded, so replicas stay consistent.
    @discardableResult
    public func change<T>(message: String? = nil, time: Int64? = nil, _ body: (Transaction) throws -> T) rethrows -> T {
        txnMessage = message
        txnTime = time
        txnHasChange = false
        if recordingUndo { undoLog.begin() }
        defer {
            if txnHasChange, let r = openRecordCandidate {
                // A change with a message is complete: don't let later edits join it.
                if message != nil || !coalescesLocalChanges { seal(r); openRecord = nil } else { openRecord = r }
            }
            openRecordCandidate = nil
            publishLocalPatches()
            if undoLog.commit(limit: undoLimit), !replaying { redoStack.removeAll() }
            txnHasChange = false
        }
        return try body(Transaction(doc: self))
    }

    func sequence(_ obj: ObjectID, text: Bool) throws -> (OpID, SequenceState) {
        let (o, st) = try state(obj)
        guard case .sequence(let s) = st, s.isText == text else {
            throw CRDTError(.wrongObjectType, "\(obj) is not a \(text ? "text" : "list")")
        }
        return (o, s)
    }

    /// Reserves counters for a local op, opening (or reusing) the current change.
    func nextOpID(width: Int) -> OpID {
        ensureLocalRecord()
        // `ensureLocalRecord` read the history, so the load is complete: no accessor needed.
        let id = OpID(counter: storedMaxCounter + 1, actor: selfActor)
        storedMaxCounter += width
        return id
    }

    func recordLocal(_ op: Op) {
        records[openRecordCandidate!].append(op)
    }

    /// Records an op of width 1 and returns its id.
    func localOp(obj: OpID, _ action: Op.Action) -> OpID {
        let id = nextOpID(width: 1)
        recordLocal(Op(id: id, obj: obj, action: action))
        return id
    }

    func ensureLocalRecord() {
        if txnHasChange { return }
        txnHasChange = true
        if let o = openRecord, txnMessage == nil, coalescesLocalChanges, records[o].actor == selfActor,
            heads.count == 1, heads.contains(o)
        {
            openRecordCandidate = o
            return
        }
        sealOpen()
        for h in heads where records[h].hash == nil { seal(h) }
        let seq = (lastSeq[selfActor] ?? 0) + 1
        let r = ChangeRecord(
            actor: selfActor, seq: seq, startOp: maxCounter + 1, opCount: 0, time: txnTime ?? Document.now(),
            message: txnMessage, deps: heads.sorted(), ops: [])
        openRecordCandidate = appendRecord(r)
    }

    func createObjectIfNeeded(_ id: OpID, _ v: NewValue) {
        // An object already there was filled by a load; op ids never repeat otherwise.
        guard case .object(let t) = v, objects[id] == nil else { return }
        switch t {
        case .map: objects[id] = .map(MapState())
        case .list: objects[id] = .sequence(SequenceState(isText: false, leafCapacity: leafCapacity))
        case .text: objects[id] = .sequence(SequenceState(isText: true, leafCapacity: leafCapacity))
        }
    }

    func deleteLocal(_ o: OpID, _ seq: SequenceState, _ index: Int, _ count: Int) throws {
        guard index >= 0, count >= 0, index + count <= seq.visibleCount else {
            throw CRDTError(.indexOutOfBounds, "delete \(index)..<\(index + count) of \(seq.visibleCount)")
        }
        if count == 0 { return }
        seq.deleteLocal(at: index, count: count) { target, n in
            let id = nextOpID(width: n)
            recordLocal(Op(id: id, obj: o, action: .remove(target: target, count: n)))
            noteUndo(.deleted(obj: o, target: target, count: n))
        }
    }
}
