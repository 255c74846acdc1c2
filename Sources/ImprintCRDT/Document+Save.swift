extension Document {
    // MARK: Save

    /// The whole document with its complete history, compressed (`docs/format.md`).
    ///
    /// A document that holds redacted changes (``hasRedactedHistory``: loaded from a save
    /// written with ``HistoryRetention/redacted``) has no complete history: it writes a
    /// redacted save, which loads into the same document (see ``save(history:)``).
    public func save() -> [UInt8] { save(visibleTextFirst: true) }

    /// `save()` in format version 5 (`visibleTextFirst` and `runHeaders`), 3
    /// (`visibleTextFirst` alone: one header per change), or in the layout of versions 1
    /// and 2 (1 without marks, 2 with), byte for byte what builds before version 3 wrote.
    /// Versions 1 to 3 are framed as the builds that wrote them did (a SHA-256 checksum);
    /// version 5 with the XXH64 checksum. A document with redacted changes writes version 4
    /// (XXH64) whatever is asked.
    func save(visibleTextFirst: Bool, runHeaders: Bool = true) -> [UInt8] {
        // The saved changes must not grow afterwards (incremental saves start after them),
        // but they need no hash yet: stop coalescing without sealing.
        openRecord = nil
        savedRecordCount = records.count
        // A document whose history failed to decode (it holds nothing) saves as the bytes it
        // was loaded from: whoever writes the result back loses nothing by it.
        if deferredLoad != nil { completeDeferredLoad() }
        if let unloadable = unloadablePayload { return DocumentFormat.frame(unloadable.payload, version: unloadable.version) }
        if !redactedRecords.isEmpty { return saveRedacted() }
        let (payload, version) = encodePayload(visibleTextFirst: visibleTextFirst, runHeaders: runHeaders)
        return DocumentFormat.frame(payload, version: version, checksum: version == DocumentFormat.runVersion ? .xxh64 : .sha256)
    }

    /// The changes made or received since the last `save()` / `saveIncremental()`, as one
    /// chunk that `load` accepts appended after a full save. Redacted changes (a fork of a
    /// redacted document holds some it has not saved) are left out, as from ``allChanges()``.
    public func saveIncremental() -> [UInt8] {
        sealAll()
        let new = records.indices[savedRecordCount...].filter { !redactedRecords.contains($0) }.map { records[$0].bytes! }
        savedRecordCount = records.count
        return IncrementalFormat.encode(new)
    }

    /// Loads a document saved by ``save()``, optionally followed by incremental chunks.
    ///
    /// Corrupt, truncated or hostile bytes throw ``CRDTError``. A document saved by this
    /// build (format version 5, or 3 from earlier builds) and not followed by chunks is opened for reading: its frame
    /// and checksum, actors, objects, map keys and visible text are checked here, and its
    /// history (changes, removes, the texts' items and every check between them) is decoded
    /// and validated in full on first need: the first call that edits, applies, syncs,
    /// saves or reads anything else. Damage found then is thrown by that call (and by every
    /// later throwing call) and leaves the document empty (``save()`` then writes back the
    /// bytes it was loaded from); ``finishLoading()`` runs that
    /// step at once. Older documents, and documents followed by chunks, load in full here.
    public static func load(_ bytes: [UInt8], actor: ActorID = .random()) throws -> Document {
        guard !bytes.isEmpty else { throw CRDTError(.truncated, "no data") }
        let (docBytes, chunks) = try IncrementalFormat.split(bytes)
        let doc = Document(actor: actor)
        if let d = docBytes {
            let payload = try DocumentFormat.unframe(d)
            // A version 3 or 5 document alone opens for reading; its history is decoded and
            // validated on first need (`DeferredLoad`).
            if (d[4] == DocumentFormat.readableVersion || d[4] == DocumentFormat.runVersion) && chunks.isEmpty {
                try doc.openDeferred(payload, version: d[4])
                return doc
            }
            try doc.decodePayload(payload, version: d[4])
        }
        for c in chunks { try doc.apply(try IncrementalFormat.decode(c)) }
        doc.savedRecordCount = doc.recordCount
        return doc
    }

    /// Merges a saved document (or change chunks) into this one.
    ///
    /// Into an empty document the saved state is adopted as it is (no re-integration);
    /// otherwise every change this document lacks is applied.
    public func merge(_ bytes: [UInt8]) throws {
        try completeLoad()
        try merge(adopting: try Document.load(bytes))
    }

    /// Merges another document's changes into this one. `other` is left as it was and stays
    /// independent: into an empty document its state is adopted from a saved copy (its
    /// objects are mutable, so sharing them would let each document's edits leak into the
    /// other).
    public func merge(_ other: Document) throws {
        try completeLoad()
        try other.completeLoad()
        if isEmptyForAdoption {
            try merge(adopting: try Document.load(other.save()))
        } else {
            try merge(adopting: other)
        }
    }

    /// Whether this document holds nothing, so a merge may adopt another state whole.
    private var isEmptyForAdoption: Bool { recordCount == 0 && maxCounter == 0 && pending.isEmpty }

    /// `merge`, where `other` is this call's own (freshly loaded, used by nobody else): an
    /// empty document takes over its state.
    private func merge(adopting other: Document) throws {
        if isEmptyForAdoption {
            publishingRemotePatches { adoptState(of: other) }
            return
        }
        try other.completeLoad()
        let mine = Set(recordByHashSealed())
        try apply(other.allChanges().filter { !mine.contains($0.hash) })
    }

    private func recordByHashSealed() -> [ChangeHash] {
        sealAll()
        return Array(recordByHash.keys)
    }

    /// Every change in history, in an order where dependencies come first.
    ///
    /// A document with redacted history (``hasRedactedHistory``) leaves out its redacted
    /// changes: their content is gone, and they cannot be rebuilt under their hashes. A
    /// replica that lacks them gets them from a holder of the full history; the changes
    /// returned that depend on them wait there (``pendingChangeCount``) until then.
    public func allChanges() -> [Change] {
        materializeInserts()
        sealAll()
        return portableChanges(records.indices)
    }

    /// The changes not reachable from `heads` (everything the holder of `heads` lacks),
    /// but for redacted changes, which are never handed out (see ``allChanges()``).
    public func changes(since heads: [ChangeHash]) -> [Change] {
        materializeInserts()
        sealAll()
        // Heads this document handed out (`currentHeads`): what came after them is a suffix.
        let wanted = heads.sorted()
        if let memo = headsMemo.last(where: { $0.heads == wanted }), memo.count <= records.count {
            return portableChanges(memo.count..<records.count)
        }
        var known = Set<Int>()
        var stack = heads.compactMap { recordByHash[$0] }
        while let i = stack.popLast() {
            if known.insert(i).inserted { stack.append(contentsOf: records[i].deps) }
        }
        return portableChanges(records.indices.filter { !known.contains($0) })
    }

    /// Takes over another document's state and history (this document must be empty).
    private func adoptState(of other: Document) {
        let me = actor
        if var deferred = other.deferredLoad {
            // Still only opened for reading: take over the undecoded payload as it is.
            deferred.countsAsSaved = false
            actors = other.actors
            actorIndex = other.actorIndex
            storedObjects = other.storedObjects
            lastState = nil
            deferredLoad = deferred
            openRecord = nil
            selfActor = intern(me)
            return
        }
        actors = other.actors
        actorIndex = other.actorIndex
        objects = other.objects
        maxCounter = other.maxCounter
        storedRecords = other.storedRecords
        forgetRecordPositions()
        loadedHistory = other.loadedHistory
        recordByHash = other.recordByHash
        lastSeq = other.lastSeq
        lastRecordOfActor = other.lastRecordOfActor
        heads = other.heads
        pending = other.pending
        openRecord = nil
        insertsMissing = other.insertsMissing
        redactedRecords = other.redactedRecords
        other.openRecord = nil
        selfActor = intern(me)
    }

    // MARK: Payload encoding

    /// Encodes the payload and its format version: 5 (`visibleTextFirst` with `runHeaders`:
    /// change headers as runs, `ChangeRuns`), 3 (`visibleTextFirst` alone), else 2 when it
    /// holds mark ops and 1 otherwise; `statistics` (for tuning) sees every column's raw
    /// bytes by name.
    ///
    /// `redacted` (version 4, with `visibleTextFirst`): the changes whose content the save
    /// drops, in history order, with their hashes; every change that inserted deleted text
    /// must be among them. Deleted text is then left out of the texts' content columns.
    func encodePayload(
        visibleTextFirst: Bool = true, runHeaders: Bool = true, redacted: [(record: Int, hash: ChangeHash)]? = nil,
        statistics: ((String, [UInt8]) -> Void)? = nil
    ) -> (payload: [UInt8], version: UInt8) {
        var w = ByteWriter()
        let encoder = Zstd.Encoder()
        // Actors.
        w.uleb(actors.count)
        for a in actors { w.lengthPrefixed(a.bytes) }
        let ref = Document.writeRef
        // Change headers: runs (version 5), else one entry per change in 7 columns.
        let runHeaders = visibleTextFirst && runHeaders && redacted == nil
        if runHeaders { ChangeRuns.write(records, to: &w, encoder: encoder, statistics: statistics) } else { writeChangeColumns(&w, encoder: encoder, statistics: statistics) }
        // Objects.
        let objectIDs = objects.keys.filter { $0 != .root }.sorted { ($0.counter, $0.actor) < ($1.counter, $1.actor) }
        w.uleb(objectIDs.count)
        for o in objectIDs {
            ref(o, &w)
            w.byte(objects[o]!.type.rawValue)
        }
        // Map and element ops, and removes, from the records.
        var mapOps: [Op] = []
        var removes: [Op] = []
        var markOps: [Op] = []
        for r in records {
            for op in r.ops {
                switch op.action {
                case .put, .delete, .increment: mapOps.append(op)
                case .remove: removes.append(op)
                case .mark: markOps.append(op)
                default: break
                }
            }
        }
        mapOps.sort { ($0.id.counter, actors[Int($0.id.actor)]) < ($1.id.counter, actors[Int($1.id.actor)]) }
        w.uleb(mapOps.count)
        var mw = ByteWriter()
        for op in mapOps {
            ref(op.id, &mw)
            ref(op.obj, &mw)
            func key(_ k: Key) {
                switch k {
                case .map(let s):
                    mw.byte(0)
                    mw.string(s)
                case .element(let e):
                    mw.byte(1)
                    ref(e, &mw)
                }
            }
            func pred(_ p: [OpID]) {
                mw.uleb(p.count)
                for x in p { ref(x, &mw) }
            }
            switch op.action {
            case .put(let k, let v, let p):
                mw.byte(1); key(k); ValueCoding.encode(v, &mw); pred(p)
            case .delete(let k, let p):
                mw.byte(2); key(k); pred(p)
            case .increment(let k, let by, let p):
                mw.byte(3); key(k); mw.sleb(by); pred(p)
            default: break
            }
        }
        ColumnSet.writeColumn(mw.bytes, to: &w, encoder: encoder)
        statistics?("mapOps", mw.bytes)
        var rc = ColumnSet(count: 6)
        w.uleb(removes.count)
        var prevRemove = 0
        var prevTarget = 0
        for op in removes {
            guard case .remove(let t, let n) = op.action else { continue }
            rc.columns[0].uleb(Int(op.id.actor))
            rc.columns[1].sleb(op.id.counter - prevRemove)
            ref(op.obj, &rc.columns[2])
            rc.columns[3].uleb(Int(t.actor))
            rc.columns[5].sleb(t.counter - prevTarget)
            rc.columns[4].uleb(n)
            prevRemove = op.id.counter + n
            prevTarget = t.counter + n
        }
        if let statistics {
            for (i, c) in rc.columns.enumerated() { statistics("removes." + ["actor", "counter", "obj", "targetActor", "count", "target"][i], c.bytes) }
        }
        rc.write(to: &w, encoder: encoder)
        // Sequences: spans in document order.
        for o in objectIDs {
            guard case .sequence(let s) = objects[o]! else { continue }
            encodeSpans(s, &w, visibleFirst: visibleTextFirst, dropDeleted: redacted != nil, encoder: encoder, statistics: statistics)
        }
        // The mark ops, sorted by op id, in one column. Version 3 writes a count of 0 and
        // no column when there are none; versions 1 and 2 differ in whether the section is there.
        if let redacted {
            w.uleb(markOps.count)
            if !markOps.isEmpty { writeMarkOps(markOps, &w, encoder: encoder, statistics: statistics) }
            writeRedactedChanges(redacted, &w)
            return (w.bytes, DocumentFormat.redactedVersion)
        }
        let readable = runHeaders ? DocumentFormat.runVersion : DocumentFormat.readableVersion
        if visibleTextFirst {
            w.uleb(markOps.count)
            guard !markOps.isEmpty else { return (w.bytes, readable) }
        } else {
            guard !markOps.isEmpty else { return (w.bytes, DocumentFormat.version) }
            w.uleb(markOps.count)
        }
        writeMarkOps(markOps, &w, encoder: encoder, statistics: statistics)
        return (w.bytes, visibleTextFirst ? readable : DocumentFormat.markVersion)
    }

    /// Section 2 in versions 1 to 4: `uleb changeCount`, then 7 columns with one entry per change.
    private func writeChangeColumns(_ w: inout ByteWriter, encoder: Zstd.Encoder, statistics: ((String, [UInt8]) -> Void)?) {
        w.uleb(records.count)
        var cols = ColumnSet(count: 7)
        var prevStart = 0
        var prevTime: Int64 = 0
        for (i, r) in records.enumerated() {
            cols.columns[0].uleb(Int(r.actor))
            cols.columns[1].uleb(r.seq)
            cols.columns[2].sleb(r.startOp - prevStart)
            cols.columns[3].uleb(r.opCount)
            cols.columns[4].sleb(r.time &- prevTime)
            if let m = r.message {
                cols.columns[5].byte(1)
                cols.columns[5].string(m)
            } else {
                cols.columns[5].byte(0)
            }
            cols.columns[6].uleb(r.deps.count)
            for d in r.deps { cols.columns[6].uleb(i - d) }
            prevStart = r.startOp
            prevTime = r.time
        }
        if let statistics {
            for (k, c) in cols.columns.enumerated() { statistics("changes." + ["actor", "seq", "startOp", "opCount", "time", "message", "deps"][k], c.bytes) }
        }
        cols.write(to: &w, encoder: encoder)
    }

    /// Writes a ref (`uleb (actorIndex + 1), uleb counter`, or `0` for none or the root).
    static func writeRef(_ id: OpID, _ w: inout ByteWriter) {
        if id.actor < 0 {
            w.uleb(0)
        } else {
            w.uleb(Int(id.actor) + 1)
            w.uleb(id.counter)
        }
    }

    /// Section 7's column: the mark ops sorted by op id.
    private func writeMarkOps(_ ops: [Op], _ w: inout ByteWriter, encoder: Zstd.Encoder, statistics: ((String, [UInt8]) -> Void)?) {
        let ref = Document.writeRef
        let markOps = ops.sorted { ($0.id.counter, actors[Int($0.id.actor)]) < ($1.id.counter, actors[Int($1.id.actor)]) }
        var kw = ByteWriter()
        for op in markOps {
            guard case .mark(let m) = op.action else { continue }
            ref(op.id, &kw)
            ref(op.obj, &kw)
            MarkCoding.encode(m, &kw, ref: ref)
        }
        ColumnSet.writeColumn(kw.bytes, to: &w, encoder: encoder)
        statistics?("markOps", kw.bytes)
    }

    /// Section 8 of a redacted save: `uleb n`, each redacted change's index as a gap from
    /// the previous one (`uleb (index − previous − 1)`, the first from −1), then their
    /// 32-byte hashes in the same order.
    private func writeRedactedChanges(_ redacted: [(record: Int, hash: ChangeHash)], _ w: inout ByteWriter) {
        w.uleb(redacted.count)
        var previous = -1
        for (i, _) in redacted {
            w.uleb(i - previous - 1)
            previous = i
        }
        for (_, h) in redacted { w.raw(h.bytes) }
    }

    private func encodeSpans(
        _ s: SequenceState, _ w: inout ByteWriter, visibleFirst: Bool, dropDeleted: Bool = false, encoder: Zstd.Encoder,
        statistics: ((String, [UInt8]) -> Void)?
    ) {
        // Merge neighbours that continue each other apart from content placement.
        var merged: [Span] = []
        merged.reserveCapacity(s.leaves.count * 48)
        var content = ByteWriter()
        var deletedContent = ByteWriter()
        s.forEachSpan { sp in
            if var last = merged.last, last.id.actor == sp.id.actor, last.id.counter + last.length == sp.id.counter,
                last.deleted == sp.deleted, last.right == sp.right, sp.left == last.lastID
            {
                last.length += sp.length
                last.contentBytes += sp.contentBytes
                merged[merged.count - 1] = last
            } else {
                merged.append(sp)
            }
            if s.isText {
                // Visible text first, in document order; the deleted text after it.
                if sp.deleted && dropDeleted {
                    // A redacted save: no byte of deleted text.
                } else if sp.deleted && visibleFirst {
                    deletedContent.raw(s.utf8[sp.contentStart..<sp.contentStart + sp.contentBytes])
                } else {
                    content.raw(s.utf8[sp.contentStart..<sp.contentStart + sp.contentBytes])
                }
            } else {
                for k in 0..<sp.length {
                    let value = s.initialValues[sp.contentStart + k]
                    // A redacted save: a deleted item's scalar reads as null (an object stays:
                    // the ops inside it name it).
                    if dropDeleted && sp.deleted, case .scalar = value {
                        ValueCoding.encode(.scalar(.null), &content)
                    } else {
                        ValueCoding.encode(value, &content)
                    }
                }
            }
        }
        let counters = merged.map(\.id.counter)
        let lengths = merged.map(\.length)
        let actorsCol = merged.map(\.id.actor)
        let inferredLeft = OriginInference.left(counters: counters, lengths: lengths, actors: actorsCol)
        let inferredRight = OriginInference.right(counters: counters, actors: actorsCol)
        var cols = ColumnSet(count: 7)
        var prev = 0
        var deletedRun = 0
        var runDeleted = false
        for (i, sp) in merged.enumerated() {
            cols.columns[0].uleb(Int(sp.id.actor))
            cols.columns[1].sleb(sp.id.counter - prev)
            prev = sp.id.counter + sp.length
            cols.columns[2].uleb(sp.length)
            let lx = sp.left != inferredLeft[i]
            let rx = sp.right != inferredRight[i]
            cols.columns[3].byte((lx ? 1 : 0) | (rx ? 2 : 0))
            func ref(_ id: OpID) {
                if id.isNone {
                    cols.columns[4].uleb(0)
                } else {
                    cols.columns[4].uleb(Int(id.actor) + 1)
                    cols.columns[4].sleb(sp.id.counter - id.counter)
                }
            }
            if lx { ref(sp.left) }
            if rx { ref(sp.right) }
            if sp.deleted != runDeleted {
                cols.columns[5].uleb(deletedRun)
                deletedRun = 0
                runDeleted = sp.deleted
            }
            deletedRun += 1
        }
        cols.columns[5].uleb(deletedRun)
        let visibleBytes = content.bytes.count
        content.raw(deletedContent.bytes)
        cols.columns[6] = content
        if let statistics {
            let names = ["actor", "counter", "length", "originFlags", "origins", "deleted", "content"]
            for (i, c) in cols.columns.enumerated() { statistics("spans." + names[i], c.bytes) }
        }
        w.uleb(merged.count)
        if s.isText && visibleFirst { w.uleb(visibleBytes) }
        cols.write(to: &w, encoder: encoder)
    }

    // MARK: Payload decoding

    /// Loads a payload of format `version` (1; 2 with a mark-op section; 3 with visible text
    /// first and a mark-op count; 4 redacted; 5 as 3 with change runs) into this empty
    /// document, decoding and validating all of it.
    /// `decoder` is reused when given (a deferred load keeps the one it opened with).
    func decodePayload(_ payload: [UInt8], version: UInt8 = DocumentFormat.version, decoder: Zstd.Decoder? = nil) throws {
        let visibleFirst = version >= DocumentFormat.readableVersion
        // Version 4: deleted text has no content (it reads as `redactedCharacter`), and a last
        // section names the changes that lost content.
        let redactedSave = version == DocumentFormat.redactedVersion
        var r = ByteReader(payload)
        // A constant, so the closures below capture it without a box (no exclusivity checks).
        let map = try decodeActorTable(&r)
        func actorRef(_ raw: Int) throws -> Int32 {
            guard raw < map.count else { throw CRDTError(.malformed, "actor index out of range") }
            return map[raw]
        }
        func ref(_ r: inout ByteReader) throws -> OpID { try Document.readRef(&r, actors: map) }
        // Records: one header per change, or (version 5) runs of changes.
        var budget = DocumentFormat.maxPayload
        let decoder = try decoder ?? Zstd.Decoder()
        // Bulk load into an empty document: per-actor bookkeeping in arrays indexed by the
        // interned actor, heads and the dictionaries filled once at the end.
        precondition(self.recordCount == 0, "decodePayload loads into an empty document")
        var history = LoadedHistory()
        let decoded: HeaderTable.Decoded
        if version == DocumentFormat.runVersion {
            decoded = try ChangeRuns.read(&r, actorMap: map, actorCount: actors.count, budget: &budget, decoder: decoder, into: &history)
        } else {
            let recordCount = try r.count(max: r.remaining * 64)
            let cols = try ColumnSet.read(&r, count: 7, budget: &budget, decoder: decoder)
            guard recordCount <= cols[0].remaining else { throw CRDTError(.malformed, "change count exceeds data") }
            decoded = try decodeHeaders(cols, count: recordCount, actorMap: map, into: &history)
        }
        let recordCount = history.count
        var changeRanges = decoded.ranges
        maxCounter = max(maxCounter, decoded.maxCounter)
        insertsMissing = 0..<recordCount
        for a in actors.indices where decoded.lastOfActor[a] >= 0 {
            lastSeq[Int32(a)] = decoded.seqOfActor[a]
            lastRecordOfActor[Int32(a)] = decoded.lastOfActor[a]
        }
        heads = Set(decoded.heads)
        let objectIDs = try decodeObjectTable(&r, ref: ref)
        // Map ops (applied after sequences exist).
        let mapOps = try decodeMapOpSection(&r, budget: &budget, decoder: decoder, ref: ref)
        // Removes.
        let removeCount = try r.count(max: r.remaining * 64)
        let rc = try ColumnSet.read(&r, count: 6, budget: &budget, decoder: decoder)
        guard removeCount <= rc[4].remaining else { throw CRDTError(.malformed, "remove count exceeds data") }
        // Both counts are bounded by their columns' bytes: one allocation instead of a
        // doubling series (copies and fresh pages that dominated long histories' loads).
        history.ops.reserveCapacity(mapOps.count)
        history.removes.reserveCapacity(removeCount)
        var actorColumn = rc[0], counterColumn = rc[1], objectColumn = rc[2]
        var targetActorColumn = rc[3], countColumn = rc[4], targetColumn = rc[5]
        // Remove ops (objects checked once per run of one object), given their changes once
        // the counter tables are built, below. A loaded change's ops are put in counter order
        // when its insert ops are rebuilt (`materializeInserts`), so the order they are
        // appended in does not matter.
        var lastSequence = OpID.none
        var prevRemove = 0
        var prevTarget = 0
        for _ in 0..<removeCount {
            let actor = try actorRef(try actorColumn.count(max: map.count))
            let counter = prevRemove &+ (try counterColumn.delta())
            var obj = try ref(&objectColumn)
            if obj.isNone { obj = .root }
            let tActor = try actorRef(try targetActorColumn.count(max: map.count))
            let tCounter = prevTarget &+ (try targetColumn.delta())
            let n = try countColumn.count(max: ChangeCoding.maxOpCount)
            // Counters stay within what a change can hold, so the sums below cannot overflow.
            guard n >= 1, (1...ChangeCoding.maxOpCount).contains(counter), (1...ChangeCoding.maxOpCount).contains(tCounter) else {
                throw CRDTError(.malformed, "bad remove")
            }
            let id = OpID(counter: counter, actor: actor)
            prevRemove = counter + n
            prevTarget = tCounter + n
            if obj != lastSequence {
                guard case .sequence? = objects[obj] else { throw CRDTError(.malformed, "remove on non-sequence") }
                lastSequence = obj
            }
            history.removes.append(LoadedHistory.Remove(
                record: -1, id: id, obj: obj, target: OpID(counter: tCounter, actor: tActor), count: n))
        }
        // Sequences, numbered from 1 in the order of `objectIDs` (for `OpClaims`).
        var sequenceNumbers: [OpID: Int32] = [:]
        var items = 0
        for o in objectIDs {
            guard case .sequence(let s) = objects[o]! else { continue }
            guard sequenceNumbers.count + 1 < Int(OpClaims.maxSequences) else { throw CRDTError(.tooLarge, "too many sequences") }
            let number = Int32(sequenceNumbers.count + 1)
            sequenceNumbers[o] = number
            items += try decodeSpans(s, &r, actorRef, visibleFirst: visibleFirst, dropDeleted: redactedSave, budget: &budget, decoder: decoder)
        }
        // O(1) counter tables of at most about twice the ops (ids interleave between actors),
        // bounded by the items and ops decoded, not by the op counts the headers declare.
        changeRanges.indexCounters(budget: 2 * min(decoded.declaredOps, 2 * (items + mapOps.count + removeCount)) + 4096)
        // A constant from here on, so the closure below captures it without a box.
        let ranges = changeRanges
        // Ops come in runs of one change: each actor's last hit answers most lookups.
        var hints = [Int](repeating: 0, count: actors.count)
        func recordOf(_ id: OpID) throws -> Int {
            guard let found = ranges.locate(actor: id.actor, counter: id.counter, hint: &hints[max(0, Int(id.actor))]) else {
                throw CRDTError(.malformed, "op outside every change")
            }
            return found.record
        }
        for k in history.removes.indices { history.removes[k].record = try recordOf(history.removes[k].id) }
        // Mark ops (versions 2 and 3): checked against the spans once every item is claimed,
        // below. Version 2 has at least one; version 3 writes a count of 0 and no column
        // when there are none.
        var markOps: [Op] = []
        let markCount = version == DocumentFormat.markVersion ? try r.count(max: r.remaining * 64)
            : visibleFirst ? try r.count(max: r.remaining * 64) : 0
        if version == DocumentFormat.markVersion || markCount > 0 {
            var kr = try ColumnSet.read(&r, count: 1, budget: &budget, decoder: decoder)[0]
            guard markCount >= 1, markCount <= kr.remaining / 4 else { throw CRDTError(.malformed, "bad mark op count") }
            for _ in 0..<markCount {
                let id = try ref(&kr)
                let obj = try ref(&kr)
                guard !id.isNone, !obj.isNone else { throw CRDTError(.malformed, "mark op without id or object") }
                guard case .sequence(let s)? = objects[obj], s.isText else { throw CRDTError(.malformed, "mark op on non-text") }
                let m = try MarkCoding.decode(&kr) { r in
                    let x = try ref(&r)
                    return x.isNone ? nil : x
                }
                let op = Op(id: id, obj: obj, action: .mark(m))
                markOps.append(op)
                history.ops.append((try recordOf(id), op))
                s.addMark(m, id: id)
            }
            guard kr.isAtEnd else { throw CRDTError(.malformed, "trailing bytes in mark ops") }
        }
        let redacted = redactedSave ? try decodeRedactedChanges(&r, recordCount: recordCount) : []
        guard r.isAtEnd else { throw CRDTError(.malformed, "trailing bytes in document") }
        // Registers from map ops, in Lamport order; ops into their records.
        for op in mapOps {
            let rec = try recordOf(op.id)
            switch op.action {
            case .put(.element, _, _), .delete(.element, _), .increment(.element, _, _):
                guard case .sequence(let s)? = objects[op.obj], !s.isText else { throw CRDTError(.malformed, "element op on non-list") }
            case .put, .delete, .increment:
                guard case .map? = objects[op.obj] else { throw CRDTError(.malformed, "map op on non-map") }
            default: break
            }
            try applyRemote(op)
            history.ops.append((rec, op))
        }
        // Every change's ops must add up to its declared op count: map and remove ops as
        // decoded, insert ops as the spans' items of that change (rebuilt later from them).
        // Checked here so that bytes with a valid checksum but inconsistent sections fail to
        // load instead of producing changes that cannot be encoded. `OpClaims` takes every op
        // id once: no two ops may share one and each must lie inside a change (map and remove
        // ops inside their own), so the claims add up to the declared ops exactly when every
        // change's counters are used once.
        // The removes claim theirs as the table is built, which refuses (before allocating
        // anything in proportion to the declared counts) changes declaring other ops than the
        // items, map and mark ops there are.
        var claims = try OpClaims(
            ranges: ranges, history: history, declaredOps: decoded.declaredOps,
            heldOps: items + history.ops.reduce(0) { $0 + $1.op.width })
        for (_, op) in history.ops {
            // (Its change was found by the op's first counter: `end` is that change's last.)
            guard let end = ranges.locate(actor: op.id.actor, counter: op.id.counter, hint: &hints[max(0, Int(op.id.actor))])?.end,
                op.id.counter + op.width - 1 <= end,
                claims.claim(actor: op.id.actor, start: op.id.counter, count: op.width, for: OpClaims.otherOp)
            else { throw CRDTError(.malformed, "op \(op.id.counter) shares its id or runs past its change") }
        }
        // Deleted items are claimed as such and counted, for the removes to cover below.
        var deletedItems = 0
        for o in objectIDs {
            guard case .sequence(let s) = objects[o]!, let number = sequenceNumbers[o] else { continue }
            let deleted = OpClaims.deleted(number)
            for leaf in s.leaves {
                for sp in leaf.spans {
                    if sp.deleted { deletedItems += sp.length }
                    guard claims.claim(actor: sp.id.actor, start: sp.id.counter, count: sp.length, for: sp.deleted ? deleted : number) else {
                        throw CRDTError(.malformed, "an inserted item \(sp.id.counter) shares its id with another op or lies outside every change")
                    }
                }
            }
        }
        guard claims.claimedCount == decoded.declaredOps else {
            throw CRDTError(.malformed, "the changes declare \(decoded.declaredOps) ops but hold \(claims.claimedCount)")
        }
        // What replaying the history will demand of each change, as `apply` does, beside the
        // ids claimed above: every origin and every removed item is an item of the same
        // sequence, and an origin comes before its item in the history (an earlier change, or
        // an earlier op of the same change). Origins the format leaves out are inferred from
        // neighbouring spans' counters, which damaged bytes can make point anywhere: all are
        // checked, once every item is claimed.
        var originHints = [Int](repeating: 0, count: actors.count), itemHints = originHints
        // (Items and ops are claimed, so they lie inside changes: `locate` finds them.)
        func recordOfClaimed(_ item: OpID) -> Int {
            ranges.locate(actor: item.actor, counter: item.counter, hint: &itemHints[Int(item.actor)])?.record ?? -1
        }
        // `itemRecord`: the change of `item`, found on first need (`Int.min` until then).
        func checkOrigin(_ origin: OpID, of item: OpID, itemRecord: inout Int, in number: Int32) throws {
            guard !origin.isNone else { return }
            if origin.actor == item.actor, origin.counter < item.counter {
                // An actor's counters ascend with its changes (`HeaderTable`), so the origin is
                // in the item's change or an earlier one, and before the item: no change to find.
                guard OpClaims.isItem(claims.owner(actor: origin.actor, counter: origin.counter), of: number) else {
                    throw CRDTError(.malformed, "insert origin unknown")
                }
                return
            }
            let (owner, originRecord) = claims.claimant(actor: origin.actor, counter: origin.counter)
            guard OpClaims.isItem(owner, of: number) else { throw CRDTError(.malformed, "insert origin unknown") }
            if itemRecord == Int.min { itemRecord = recordOfClaimed(item) }
            guard originRecord < itemRecord else { throw CRDTError(.malformed, "insert origin after its item") }
        }
        for o in objectIDs {
            guard case .sequence(let s) = objects[o]!, let number = sequenceNumbers[o] else { continue }
            for leaf in s.leaves {
                for sp in leaf.spans {
                    var itemRecord = Int.min
                    try checkOrigin(sp.left, of: sp.id, itemRecord: &itemRecord, in: number)
                    try checkOrigin(sp.right, of: sp.id, itemRecord: &itemRecord, in: number)
                }
            }
        }
        // A mark's anchors are items of its text that exist before the mark op does; an
        // overlapping mark's instance is an op of the history.
        let markObjects = Dictionary(markOps.map { ($0.id, $0.obj) }, uniquingKeysWith: { a, _ in a })
        for op in markOps {
            guard case .mark(let m) = op.action, let number = sequenceNumbers[op.obj] else { continue }
            var opRecord = recordOfClaimed(op.id)
            for item in [m.start.item, m.end.item].compactMap({ $0 }) { try checkOrigin(item, of: op.id, itemRecord: &opRecord, in: number) }
            guard let i = m.instance, i != op.id else { continue }
            // Another mark op of the same text, earlier in the history.
            guard markObjects[i] == op.obj,
                let instanceRecord = ranges.locate(actor: i.actor, counter: i.counter, hint: &originHints[Int(i.actor)])?.record,
                instanceRecord < opRecord || (instanceRecord == opRecord && i.actor == op.id.actor && i.counter < op.id.counter)
            else { throw CRDTError(.malformed, "mark instance is no earlier mark of its text") }
        }
        // The state agrees with its history: an item is deleted exactly when a remove covers
        // it (damaged deleted-run columns would otherwise load text that replaying the
        // changes does not give). Every remove covers deleted items of its sequence only, so
        // none covers a visible item; together they cover each deleted item at least once
        // exactly when the items they covered first add up to the deleted items claimed.
        var lastObject = OpID.none, number: Int32 = 0
        var coveredItems = 0
        for remove in history.removes {
            if remove.obj != lastObject { (lastObject, number) = (remove.obj, sequenceNumbers[remove.obj] ?? 0) }
            let target = remove.target
            guard number > 0, let covered = claims.cover(actor: target.actor, start: target.counter, count: remove.count, of: number) else {
                throw CRDTError(.malformed, "a remove of an item that is no deleted item of its sequence")
            }
            coveredItems += covered
        }
        guard coveredItems == deletedItems else { throw CRDTError(.malformed, "a deleted item that no remove covers") }
        if redactedSave {
            // Every change that inserted deleted text (or a deleted scalar list item) lost
            // content, so must be named with its
            // hash (its hash could not be recomputed); the save may name more (a fork of a
            // redacted document shows such text at older versions, as placeholders).
            var owners = [Bool](repeating: false, count: recordCount)
            for o in objectIDs {
                guard case .sequence(let s) = objects[o]! else { continue }
                guard Document.markOwners(ofDeletedContentIn: s, ranges: ranges, into: &owners) else {
                    throw CRDTError(.malformed, "a deleted item lies outside every change")
                }
            }
            var named = [Bool](repeating: false, count: recordCount)
            for (i, _) in redacted { named[i] = true }
            guard !owners.indices.contains(where: { owners[$0] && !named[$0] }) else {
                throw CRDTError(.malformed, "a change whose deleted text is dropped is not named redacted")
            }
            history.redactedHashes = redacted
            for (i, h) in redacted { recordByHash[h] = i }
            redactedRecords = Set(redacted.map(\.record))
        }
        if recordCount > 0 { loadedHistory = history }
    }

    /// Reads section 8 of a redacted save (see `writeRedactedChanges`): the indices of the
    /// changes whose content the save dropped, strictly increasing and below `recordCount`,
    /// and their hashes, no two alike.
    private func decodeRedactedChanges(_ r: inout ByteReader, recordCount: Int) throws -> [(record: Int, hash: ChangeHash)] {
        // Each entry takes at least 33 bytes (a gap and a hash).
        let n = try r.count(max: min(recordCount, r.remaining / 33))
        var indices: [Int] = []
        indices.reserveCapacity(n)
        var previous = -1
        for _ in 0..<n {
            let i = previous + 1 + (try r.count(max: recordCount))
            guard i < recordCount else { throw CRDTError(.malformed, "redacted change index out of range") }
            indices.append(i)
            previous = i
        }
        var out: [(record: Int, hash: ChangeHash)] = []
        out.reserveCapacity(n)
        var seen = Set<ChangeHash>()
        for i in indices {
            let h = ChangeHash(unchecked: Array(try r.bytes(32)))
            guard seen.insert(h).inserted else { throw CRDTError(.malformed, "two redacted changes with one hash") }
            out.append((i, h))
        }
        return out
    }

    /// Reads the actor table (section 1), interning every actor; returns their indices in
    /// this document by position in the table.
    func decodeActorTable(_ r: inout ByteReader) throws -> [Int32] {
        let actorCount = try r.count(max: min(r.remaining, 1 << 20))
        var interned: [Int32] = []
        for _ in 0..<actorCount {
            guard let a = ActorID(bytes: Array(try r.lengthPrefixed())) else { throw CRDTError(.malformed, "bad actor") }
            interned.append(intern(a))
        }
        return interned
    }

    /// Reads a ref (`uleb (actorIndex + 1), uleb counter`, or `0` for none), the actor
    /// index mapped through `actors` (what `decodeActorTable` returned).
    @inline(__always)
    static func readRef(_ r: inout ByteReader, actors map: [Int32]) throws -> OpID {
        let a = try r.count(max: map.count)
        if a == 0 { return .none }
        return OpID(counter: try r.count(max: ChangeCoding.maxOpCount), actor: map[a - 1])
    }

    /// Decodes the map-op column (section 4): `count` put, delete and increment ops. Only
    /// their encoding is checked here; where they belong is checked by the caller.
    /// The object table of a document payload: each object is created (empty), and their ids
    /// come back in the order stored (sequences are numbered in that order).
    func decodeObjectTable(_ r: inout ByteReader, ref: (inout ByteReader) throws -> OpID) throws -> [OpID] {
        let objectCount = try r.count(max: r.remaining / 2)
        var objectIDs: [OpID] = []
        for _ in 0..<objectCount {
            let id = try ref(&r)
            guard !id.isNone, objects[id] == nil else { throw CRDTError(.malformed, "bad object id") }
            guard let t = ObjectType(rawValue: try r.byte()) else { throw CRDTError(.malformed, "bad object type") }
            createObjectIfNeeded(id, .object(t))
            objectIDs.append(id)
        }
        return objectIDs
    }

    /// The map-op section of a document payload: the op count, then one compressed column.
    func decodeMapOpSection(_ r: inout ByteReader, budget: inout Int, decoder: Zstd.Decoder,
                            ref: (inout ByteReader) throws -> OpID) throws -> [Op] {
        let mapOpCount = try r.count(max: r.remaining * 64)
        var mr = try ColumnSet.read(&r, count: 1, budget: &budget, decoder: decoder)[0]
        guard mapOpCount <= mr.remaining / 4 else { throw CRDTError(.malformed, "map op count exceeds data") }
        return try decodeMapOps(&mr, count: mapOpCount, ref: ref)
    }

    func decodeMapOps(_ mr: inout ByteReader, count mapOpCount: Int, ref: (inout ByteReader) throws -> OpID) throws -> [Op] {
        var mapOps: [Op] = []
        for _ in 0..<mapOpCount {
            let id = try ref(&mr)
            var obj = try ref(&mr)
            guard !id.isNone else { throw CRDTError(.malformed, "op without id") }
            if obj.isNone { obj = .root }
            let tag = try mr.byte()
            let key: Key
            switch try mr.byte() {
            case 0: key = .map(try mr.string())
            case 1:
                let e = try ref(&mr)
                guard !e.isNone else { throw CRDTError(.malformed, "bad element key") }
                key = .element(e)
            default: throw CRDTError(.malformed, "bad key")
            }
            let action: Op.Action
            switch tag {
            case 1:
                let v = try ValueCoding.decode(&mr)
                action = .put(key: key, value: v, pred: try predList(&mr, ref))
            case 2: action = .delete(key: key, pred: try predList(&mr, ref))
            case 3:
                let by = try mr.sleb()
                action = .increment(key: key, by: by, pred: try predList(&mr, ref))
            default: throw CRDTError(.malformed, "bad map op tag")
            }
            mapOps.append(Op(id: id, obj: obj, action: action))
        }
        return mapOps
    }

    /// Decodes and checks `count` change headers from the seven header columns of versions
    /// 1 to 4 (one entry per change) into `history` (checks: `HeaderTable`).
    private func decodeHeaders(_ cols: [ByteReader], count recordCount: Int, actorMap map: [Int32], into history: inout LoadedHistory) throws -> HeaderTable.Decoded {
        var changeActors = cols[0], seqColumn = cols[1], startColumn = cols[2], opCountColumn = cols[3]
        var timeColumn = cols[4], messageColumn = cols[5], depsColumn = cols[6]
        let opCounts = try opCountColumn.counts(recordCount, max: ChangeCoding.maxOpCount)
        let times = timeColumn
        try timeColumn.skipSlebs(recordCount)
        var table = HeaderTable(actorCount: actors.count, opCounts: opCounts, times: times, runs: recordCount, into: history)
        var prevStart = 0
        for i in 0..<recordCount {
            let rawActor = try changeActors.count(max: map.count)
            guard rawActor < map.count else { throw CRDTError(.malformed, "actor index out of range") }
            let seq = try seqColumn.count(max: Int(Int32.max))
            let start = prevStart &+ (try startColumn.delta())
            switch try messageColumn.byte() {
            case 0: break
            case 1: table.setMessage(try messageColumn.string(), of: i)
            default: throw CRDTError(.malformed, "bad message flag")
            }
            let depCount = try depsColumn.count(max: i)
            let depStart = table.history.dependencies.count
            for _ in 0..<depCount { try table.addDependency(back: try depsColumn.count(max: i)) }
            try table.append(actor: map[rawActor], seq: seq, startOp: start, dependencyStart: depStart)
            prevStart = start
        }
        let (decodedHistory, decoded) = try table.finish()
        history = decodedHistory
        return decoded
    }

    private func predList(_ r: inout ByteReader, _ ref: (inout ByteReader) throws -> OpID) throws -> [OpID] {
        let n = try r.count(max: r.remaining)
        var p: [OpID] = []
        for _ in 0..<n {
            let x = try ref(&r)
            guard !x.isNone else { throw CRDTError(.malformed, "empty pred") }
            p.append(x)
        }
        return p
    }

    /// Decodes one sequence's spans into `s`; returns how many items they hold (each backed by
    /// content bytes, a list value or, in a redacted save, a placeholder within `budget`).
    @discardableResult
    private func decodeSpans(
        _ s: SequenceState, _ r: inout ByteReader, _ actorRef: (Int) throws -> Int32, visibleFirst: Bool,
        dropDeleted: Bool = false, budget: inout Int, decoder: Zstd.Decoder
    ) throws -> Int {
        let n = try r.count(max: r.remaining * 64)
        // Version 3 texts: the content column holds the visible text first (this many bytes),
        // then the deleted text; each part in document order.
        let visibleBytes = visibleFirst && s.isText ? try r.count(max: budget) : 0
        let cols = try ColumnSet.read(&r, count: 7, budget: &budget, decoder: decoder)
        guard n <= cols[2].remaining else { throw CRDTError(.malformed, "span count exceeds data") }
        // Number columns decoded one at a time in tight loops, then checked together.
        var actorColumn = cols[0], counterColumn = cols[1], lengthColumn = cols[2], flagColumn = cols[3]
        let rawActors = try actorColumn.counts(n, max: Int(Int32.max))
        let counterDeltas = try counterColumn.slebs(n)
        let lengths = try lengthColumn.counts(n, max: ChangeCoding.maxOpCount)
        let flags = Array(try flagColumn.bytes(n))
        var actorsCol = [Int32](repeating: 0, count: n)
        var counters = [Int](repeating: 0, count: n)
        var prev = 0
        for i in 0..<n {
            actorsCol[i] = try actorRef(rawActors[i])
            counters[i] = prev &+ Int(truncatingIfNeeded: counterDeltas[i])
            guard (1...ChangeCoding.maxOpCount).contains(counters[i]), lengths[i] >= 1 else { throw CRDTError(.malformed, "bad span") }
            prev = counters[i] + lengths[i]
            guard flags[i] <= 3 else { throw CRDTError(.malformed, "bad origin flags") }
        }
        let inferredLeft = OriginInference.left(counters: counters, lengths: lengths, actors: actorsCol)
        let inferredRight = OriginInference.right(counters: counters, actors: actorsCol)
        var spans: [Span] = []
        spans.reserveCapacity(n)
        var originColumn = cols[4], deletedColumn = cols[5]
        var runLeft = try deletedColumn.count(max: n)
        var deleted = false
        // Where the next visible and the next deleted span's content starts.
        var contentOffset = 0
        var deletedOffset = visibleBytes
        let content = cols[6]
        // Text content: validate once, then find each span's byte length.
        let contentStart = content.offset
        let contentEnd = content.end
        var ascii = false
        if s.isText {
            // A column inflated into its own buffer is taken as is; a raw one is copied out.
            s.utf8 = contentStart == 0 && contentEnd == content.bytes.count ? content.bytes : Array(payloadSlice(content))
            ascii = s.utf8.withUnsafeBufferPointer { buf in
                var acc: UInt8 = 0
                for b in buf { acc |= b }
                return acc < 0x80
            }
            if !ascii {
                guard String(validating: s.utf8, as: UTF8.self) != nil else {
                    throw CRDTError(.malformed, "text content is not UTF-8")
                }
            }
        }
        var valueReader = content
        let isText = s.isText
        // A redacted save's deleted text has no bytes: each of its items gets one placeholder
        // byte, appended after the column's content. They count against the same budget as
        // inflated columns, so a few bytes declaring huge deleted spans cannot take memory.
        let placeholders = dropDeleted && isText
        if placeholders {
            guard visibleBytes == contentEnd - contentStart else { throw CRDTError(.malformed, "text content length mismatch") }
        }
        let textBytes = isText ? s.utf8 : []
        for i in 0..<n {
            func origin(_ c: inout ByteReader) throws -> OpID {
                let a = try c.count(max: Int(Int32.max))
                if a == 0 { return .none }
                let back = try c.delta()
                return OpID(counter: counters[i] - back, actor: try actorRef(a - 1))
            }
            let left = flags[i] & 1 != 0 ? try origin(&originColumn) : inferredLeft[i]
            let right = flags[i] & 2 != 0 ? try origin(&originColumn) : inferredRight[i]
            while runLeft == 0 {
                runLeft = try deletedColumn.count(max: n)
                deleted.toggle()
            }
            runLeft -= 1
            var bytes = lengths[i]
            let fromDeleted = visibleFirst && isText && deleted
            let start = fromDeleted ? deletedOffset : contentOffset
            if placeholders && deleted {
                guard bytes <= budget else { throw CRDTError(.tooLarge, "redacted text exceeds the size limit") }
                budget -= bytes
            } else if isText {
                // Visible content must stay inside the visible part (the first `visibleBytes`).
                let limit = visibleFirst && !deleted ? visibleBytes : textBytes.count
                if !ascii {
                    var b = start
                    for _ in 0..<lengths[i] {
                        guard b < limit else { throw CRDTError(.malformed, "text content too short") }
                        let c = textBytes[b]
                        b += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4
                    }
                    bytes = b - start
                }
                guard start + bytes <= limit else { throw CRDTError(.malformed, "text content too short") }
            } else {
                for _ in 0..<lengths[i] {
                    s.initialValues.append(try ValueCoding.decode(&valueReader))
                }
            }
            spans.append(Span(
                id: OpID(counter: counters[i], actor: actorsCol[i]), length: lengths[i], left: left, right: right,
                contentStart: start, contentBytes: bytes, deleted: deleted))
            if fromDeleted { deletedOffset += bytes } else { contentOffset += bytes }
        }
        if placeholders {
            guard contentOffset == visibleBytes else { throw CRDTError(.malformed, "text content length mismatch") }
            s.utf8.append(contentsOf: repeatElement(Document.redactedByte, count: deletedOffset - visibleBytes))
        } else if s.isText {
            if visibleFirst {
                guard contentOffset == visibleBytes, deletedOffset == contentEnd - contentStart else {
                    throw CRDTError(.malformed, "text content length mismatch")
                }
            }
            guard visibleFirst || contentOffset == contentEnd - contentStart else { throw CRDTError(.malformed, "text content length mismatch") }
        } else {
            guard valueReader.isAtEnd else { throw CRDTError(.malformed, "list values length mismatch") }
            // Element registers start with their inserted value.
            for sp in spans {
                for k in 0..<sp.length {
                    let v = s.initialValues[sp.contentStart + k]
                    s.elements.append(Register(entries: [.init(id: sp.id.advanced(by: k), value: v)]))
                    createObjectIfNeeded(sp.id.advanced(by: k), v)
                }
            }
        }
        s.load(spans: spans)
        return lengths.reduce(0, +)
    }

    private func payloadSlice(_ c: ByteReader) -> ArraySlice<UInt8> { c.bytes[c.offset..<c.end] }

    // MARK: Insert ops from state

    /// Rebuilds the insert ops of loaded changes from the sequences' spans, so the
    /// changes can be hashed and sent. Runs once, on first need.
    func materializeInserts() {
        guard !insertsMissing.isEmpty else { return }
        // Loaded changes come in application order, so each actor's are in counter order.
        let ranges = ChangeRanges(actorCount: actors.count, changes: insertsMissing) { (records[$0].actor, records[$0].startOp, records[$0].maxOp) }
        var hints = [Int](repeating: 0, count: actors.count)
        func recordOf(_ actor: Int32, _ counter: Int) -> Int? {
            ranges.locate(actor: actor, counter: counter, hint: &hints[Int(actor)])?.record
        }
        var extra: [Int: [Op]] = [:]
        for (o, st) in objects {
            guard case .sequence(let s) = st else { continue }
            s.forEachSpan { sp in
                var k = 0
                while k < sp.length {
                    let c = sp.id.counter + k
                    guard let rec = recordOf(sp.id.actor, c) else { k += 1; continue }
                    let n = min(sp.length - k, records[rec].maxOp - c + 1)
                    let id = OpID(counter: c, actor: sp.id.actor)
                    let left = k == 0 ? sp.left : id.advanced(by: -1)
                    if s.isText {
                        let b0 = s.byteOffset(in: sp, scalars: k)
                        let b1 = s.byteOffset(in: sp, scalars: k + n)
                        let bytes = Array(s.utf8[sp.contentStart + b0..<sp.contentStart + b1])
                        extra[rec, default: []].append(Op(id: id, obj: o, action: .insertText(left: left, right: sp.right, utf8: bytes, count: n)))
                    } else {
                        for j in 0..<n {
                            let eid = id.advanced(by: j)
                            extra[rec, default: []].append(Op(
                                id: eid, obj: o,
                                action: .insertElement(left: j == 0 ? left : eid.advanced(by: -1), right: sp.right, value: s.initialValues[sp.contentStart + k + j])))
                        }
                    }
                    k += n
                }
            }
        }
        for i in insertsMissing {
            let r = records[i]
            let all = (r.ops + (extra[i] ?? [])).sorted { $0.id.counter < $1.id.counter }
            r.ops = []
            let count = r.opCount
            r.opCount = 0
            for op in all { r.append(op, mergeRemoves: false) }
            r.opCount = count
        }
        insertsMissing = 0..<0
    }
}

extension SequenceState {
    /// Byte offset of scalar `k` within a text span.
    func byteOffset(in sp: Span, scalars k: Int) -> Int {
        if sp.contentBytes == sp.length { return k }
        var b = sp.contentStart
        for _ in 0..<k {
            let c = utf8[b]
            b += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4
        }
        return b - sp.contentStart
    }
}

/// Chunks of changes appended after a full save (`docs/format.md`, "Incremental chunk").
///
/// `IMPI` | version u8 | checksum 8 bytes (SHA-256 prefix of the rest) | uleb count |
/// (uleb length, change bytes)*
enum IncrementalFormat {
    static let magic: [UInt8] = Array("IMPI".utf8)

    static func encode(_ changes: [[UInt8]]) -> [UInt8] {
        var body = ByteWriter()
        body.uleb(changes.count)
        for c in changes { body.lengthPrefixed(c) }
        var w = ByteWriter()
        w.raw(magic)
        w.byte(1)
        w.raw(SHA256Digest.of(body.bytes).prefix(8))
        w.raw(body.bytes)
        return w.bytes
    }

    /// Splits a file into an optional full document and the chunks after it.
    static func split(_ bytes: [UInt8]) throws -> (document: [UInt8]?, chunks: [[UInt8]]) {
        var docBytes: [UInt8]?
        var offset = 0
        if bytes.count >= 4 && Array(bytes[0..<4]) == DocumentFormat.magic {
            let end = try DocumentFormat.extent(bytes)
            guard end <= bytes.count else { throw CRDTError(.truncated, "document is incomplete") }
            docBytes = Array(bytes[0..<end])
            offset = end
        }
        var chunks: [[UInt8]] = []
        while offset < bytes.count {
            guard bytes.count - offset >= 13, Array(bytes[offset..<offset + 4]) == magic else {
                if docBytes == nil && chunks.isEmpty { throw CRDTError(.notImprintData, "not Imprint data") }
                throw CRDTError(.malformed, "unexpected bytes after document")
            }
            var r = ByteReader(bytes, offset: offset + 13)
            let count = try r.count(max: r.remaining)
            for _ in 0..<count { _ = try r.lengthPrefixed() }
            chunks.append(Array(bytes[offset..<r.offset]))
            offset = r.offset
        }
        return (docBytes, chunks)
    }

    static func decode(_ chunk: [UInt8]) throws -> [Change] {
        guard chunk.count >= 13, Array(chunk[0..<4]) == magic else { throw CRDTError(.notImprintData, "not a change chunk") }
        guard chunk[4] == 1 else { throw CRDTError(.unsupportedVersion, "chunk version \(chunk[4])") }
        guard Array(SHA256Digest.of(Array(chunk[13...])).prefix(8)) == Array(chunk[5..<13]) else {
            throw CRDTError(.checksumMismatch, "change chunk checksum does not match")
        }
        var r = ByteReader(chunk, offset: 13)
        let n = try r.count(max: r.remaining)
        var out: [Change] = []
        for _ in 0..<n { out.append(try Change(bytes: Array(try r.lengthPrefixed()))) }
        guard r.isAtEnd else { throw CRDTError(.malformed, "trailing bytes in change chunk") }
        return out
    }
}

extension Document {
    /// This replica's most recent local change (sealing it, so later edits start a new one).
    public var lastLocalChange: Change? {
        guard let i = lastRecordOfActor[selfActor], !redactedRecords.contains(i) else { return nil }
        if openRecord == i { sealOpen() }
        seal(i)
        return portableChange(i)
    }
}
