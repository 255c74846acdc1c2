/// What `Document.load` keeps of a version 3 or 5 document whose history it has not decoded yet.
///
/// Opening a document to read it needs its maps and the visible text of its texts, not its
/// history. Version 3 stores each text's visible content first in its content column
/// (`docs/format.md`, "Document"), so `load` checks the frame and checksum, decodes the
/// actor and object tables and the map ops, inflates the texts' content columns and hands
/// the visible text out from there. Everything else (change headers, remove ops, spans,
/// mark ops, and every check that ties them together) is decoded and validated, in full and
/// by the same code as an eager load, the first time anything other than those reads needs
/// it (`Document.completeDeferredLoad()`); nothing reads the history before it is validated.
struct DeferredLoad {
    /// The payload, kept as it was loaded.
    var payload: [UInt8]
    var version: UInt8
    /// Each text's visible text (UTF-8 validated), by object.
    var texts: [OpID: String]
    /// Whether the decoded changes count as saved (a load: yes; a merge that adopted the
    /// loaded state: no, as for an eager adoption).
    var countsAsSaved: Bool
    /// The zstd context `load` inflated the texts with, reused to decode the rest (owned by
    /// this load: a merge that adopts it takes it from a document nobody else holds).
    var decoder: Zstd.Decoder
}

extension Document {
    /// Opens a version 3 or 5 payload (`version`) for reading; the rest is decoded on first need
    /// (``DeferredLoad``). Throws ``CRDTError`` on anything the reading part cannot trust:
    /// bad actors, objects or map ops, column framing, a visible text that is not UTF-8 or
    /// runs past its column.
    func openDeferred(_ payload: [UInt8], version: UInt8) throws {
        precondition(recordCount == 0 && deferredLoad == nil, "openDeferred opens into an empty document")
        var r = ByteReader(payload)
        let map = try decodeActorTable(&r)
        func ref(_ r: inout ByteReader) throws -> OpID { try Document.readRef(&r, actors: map) }
        var budget = DocumentFormat.maxPayload
        // Change headers: stepped over.
        if version == DocumentFormat.runVersion {
            try ChangeRuns.skip(&r, budget: budget)
        } else {
            _ = try r.count(max: r.remaining * 64)
            try ColumnSet.skip(&r, count: 7, budget: budget)
        }
        let objectIDs = try decodeObjectTable(&r, ref: ref)
        // Map ops: the map keys' registers, in Lamport order (list element ops wait).
        let decoder = try Zstd.Decoder()
        for op in try decodeMapOpSection(&r, budget: &budget, decoder: decoder, ref: ref) {
            switch op.action {
            case .put(.map, _, _), .delete(.map, _), .increment(.map, _, _):
                guard case .map? = storedObjects[op.obj] else { throw CRDTError(.malformed, "map op on non-map") }
                try applyRemote(op)
            default: continue
            }
        }
        // Removes: stepped over.
        _ = try r.count(max: r.remaining * 64)
        try ColumnSet.skip(&r, count: 6, budget: budget)
        // Sequences: a text's visible text is the start of its content column.
        var texts: [OpID: String] = [:]
        for o in objectIDs {
            guard case .sequence(let s) = storedObjects[o]! else { continue }
            _ = try r.count(max: r.remaining * 64)
            guard s.isText else {
                try ColumnSet.skip(&r, count: 7, budget: budget)
                continue
            }
            let visibleBytes = try r.count(max: budget)
            try ColumnSet.skip(&r, count: 6, budget: budget)
            let content = try ColumnSet.read(&r, count: 1, budget: &budget, decoder: decoder)[0]
            guard visibleBytes <= content.remaining else { throw CRDTError(.malformed, "visible text runs past its column") }
            texts[o] = try Self.validatedText(content.bytes[content.offset..<content.offset + visibleBytes])
        }
        deferredLoad = DeferredLoad(
            payload: payload, version: version, texts: texts, countsAsSaved: true, decoder: decoder)
    }

    /// `bytes` as a string, if they are UTF-8.
    private static func validatedText(_ bytes: ArraySlice<UInt8>) throws -> String {
        let ascii = bytes.withUnsafeBufferPointer { buf in
            var acc: UInt8 = 0
            for b in buf { acc |= b }
            return acc < 0x80
        }
        if ascii { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw CRDTError(.malformed, "text content is not UTF-8") }
        return text
    }

    /// Decodes and validates the deferred part of a load, if any, and throws the error that
    /// part failed with (now or earlier). Every throwing entry point that needs more than
    /// the readable state starts here.
    func completeLoad() throws {
        if deferredLoad != nil { completeDeferredLoad() }
        if let loadError { throw loadError }
    }

    /// Decodes the deferred payload in full (``decodePayload(_:version:)``, every check of
    /// an eager load). If it fails, the document is left holding nothing and `loadError`
    /// keeps the error for every later throwing call.
    func completeDeferredLoad() {
        guard let deferred = deferredLoad else { return }
        deferredLoad = nil
        storedObjects = [.root: .map(MapState())]
        lastState = nil
        do {
            try decodePayload(deferred.payload, version: deferred.version, decoder: deferred.decoder)
            if deferred.countsAsSaved { savedRecordCount = recordCount }
        } catch {
            loadError = error as? CRDTError ?? CRDTError(.malformed, "\(error)")
            unloadablePayload = (deferred.payload, deferred.version)
            storedObjects = [.root: .map(MapState())]
            lastState = nil
            storedMaxCounter = 0
            storedRecords = []
            forgetRecordPositions()
            storedLoadedHistory = nil
            storedRecordByHash = [:]
            storedLastSeq = [:]
            storedLastRecordOfActor = [:]
            storedHeads = []
            storedInsertsMissing = 0..<0
            savedRecordCount = 0
        }
    }

    /// An object's state for the reads a deferred load can answer (map keys and object
    /// types); otherwise `state(_:)`.
    func readableState(_ o: ObjectID) throws -> (OpID, ObjectState) {
        guard deferredLoad != nil else { return try state(o) }
        let id = try internalID(o)
        guard let s = storedObjects[id] else { throw CRDTError(.noSuchObject, "no object \(o)") }
        return (id, s)
    }

    /// Finishes loading: decodes and validates everything ``load(_:actor:)`` left for first
    /// use, so that damaged bytes are reported here rather than by a later call.
    ///
    /// `load` checks a document's frame and checksum and decodes what reading it needs;
    /// the history (changes, removes, the text's items and every check that ties them
    /// together) is decoded and validated on first need. Call this to learn at once whether
    /// all of it is sound. Throws the ``CRDTError`` the history failed with, every time; such
    /// a document then holds nothing (no objects, no history) and every throwing call
    /// throws that error. Does nothing for a document that is already complete.
    public func finishLoading() throws {
        try completeLoad()
    }
}
