import Foundation
import ImprintBundle
import ImprintCRDT

/// One collaborative document stored in a `.imprint` bundle, as one device sees it: the
/// engine's `Document` built from every snapshot, change log and conflict copy in the bundle,
/// with each local edit appended durably to this device's own log.
///
/// This is the glue between the CRDT engine and the CRDT-free bundle layer. The document's
/// shape is in docs/document-schema.md; the storage rules in docs/bundle-format.md.
public final class DocumentBundle {
    /// The bundle on disk.
    public let store: BundleStore
    /// The merged document. Edit it through `change(message:time:_:)` (or the helpers) so
    /// every change reaches the log; changes made directly are persisted by `persistNewChanges`.
    public let document: Document
    /// The body text object.
    public internal(set) var body: ObjectID
    /// metadata.json as last read (merged with its conflict copies).
    public internal(set) var metadata: BundleMetadata
    /// Non-fatal problems seen while loading: torn tails of logs in transit, damaged conflict
    /// copies. Each is one line.
    public internal(set) var warnings: [String] = []
    /// Damage in this bundle's own files that may hide changes (damaged snapshots, damaged
    /// stretches of logs, snapshots that disagree with the logs), one line each.
    public internal(set) var damage: [String] = []

    /// Why the document is known to be incomplete, or nil: some changes wait for changes
    /// that no file of the bundle holds (a snapshot or log was damaged or removed, or another
    /// device's files have not all arrived). What `text` shows is then only part of the
    /// document; the CLI refuses to read or edit it without `--allow-incomplete`.
    public var incompleteness: String? {
        let waiting = document.pendingChangeCount
        guard waiting > 0 else { return nil }
        var text = "\(waiting) change\(waiting == 1 ? "" : "s") wait for changes this bundle does not hold"
        text += damage.isEmpty ? " (other devices' files may not all have arrived)" : " (damage: \(damage.joined(separator: "; ")))"
        return text
    }

    /// Every device with a change log or snapshot in the bundle (for attributing changes).
    public internal(set) var devices: Set<DeviceID> = []

    /// `sync()` compacts this device's log once it holds this many records.
    public static let compactionThreshold = 512

    /// Records in this device's own log at the last load.
    var ownLogRecords = 0

    /// Hashes the bundle was seen to hold at the last load, plus those appended since.
    var loadedHashes: Set<ImprintBundle.RecordHash> = []
    /// How many ``batch(_:beforePersisting:)`` calls are running (edits inside one are
    /// persisted when the outermost ends).
    var batchDepth = 0
    /// The document's heads when ``persistNewChanges()`` last ran: every change they reach is
    /// in the log (nil until it has run once).
    var persistedHeads: [ChangeHash]?

    /// Hashes read from duplicate bundles that this bundle's own files do not hold.
    var duplicateHashes: Set<ImprintBundle.RecordHash> = []

    /// The file each known change was first read from (for sync reports).
    var changeSources: [ImprintBundle.RecordHash: String] = [:]

    /// This device.
    public var device: DeviceID { store.device }

    init(store: BundleStore, document: Document, body: ObjectID, metadata: BundleMetadata) {
        self.store = store
        self.document = document
        self.body = body
        self.metadata = metadata
        document.coalescesLocalChanges = false
    }

    // MARK: Creating and opening

    /// Creates a bundle at `path` holding a new document with an empty body and `title`.
    /// The creating change is durable in `device`'s log when this returns.
    public static func create(at path: String, device: DeviceID, title: String = "",
                              documentID: String = UUID().uuidString.lowercased(),
                              actor: ActorID? = nil, time: Date = Date()) throws(StoreError) -> DocumentBundle {
        var metadata = BundleMetadata(documentID: documentID, title: title, created: time)
        metadata.authors = [device.rawValue]
        let store = try StoreError.wrapping { try BundleStore.create(at: path, device: device, metadata: metadata) }
        let document = Document(actor: actor ?? Self.newActor(for: device))
        document.coalescesLocalChanges = false
        let body = try StoreError.wrapping {
            try document.change(message: "create", time: Int64(time.timeIntervalSince1970 * 1000)) { tx -> ObjectID in
                try tx.put(.root, DocumentSchema.schemaKey, .scalar(.int(DocumentSchema.version)))
                try tx.put(.root, DocumentSchema.titleKey, .scalar(.string(title)))
                return try tx.put(.root, DocumentSchema.bodyKey, .text)!
            }
        }
        let bundle = DocumentBundle(store: store, document: document, body: body, metadata: metadata)
        bundle.devices = [device]
        try bundle.persist(document.allChanges())
        return bundle
    }

    /// Creates a bundle at `path` holding `document` as it is (with its whole history), for a
    /// copy that arrives from elsewhere: a shared document a member joins. The document takes a
    /// fresh actor of `device` for its next edits; every change is durable in `device`'s log
    /// when this returns. Throws `.incomplete` when the document has no body.
    ///
    /// A document loaded from a redacted save (`Document.hasRedactedHistory`: the content of
    /// its deleted text was dropped) cannot hand its redacted changes to a log; it is written
    /// as this device's snapshot instead, which holds them, and opening the bundle loads it
    /// first.
    public static func create(at path: String, device: DeviceID, adopting document: Document, documentID: String,
                              time: Date = Date()) throws(StoreError) -> DocumentBundle {
        let body = try DocumentSchema.body(of: document)
        let title = (try? document.get(.root, DocumentSchema.titleKey)).flatMap { value -> String? in
            if case let .scalar(.string(text)) = value { return text }
            return nil
        } ?? ""
        var metadata = BundleMetadata(documentID: documentID, title: title, created: time)
        metadata.authors = [device.rawValue]
        let store = try StoreError.wrapping { try BundleStore.create(at: path, device: device, metadata: metadata) }
        document.setActor(Self.newActor(for: device))
        let bundle = DocumentBundle(store: store, document: document, body: body, metadata: metadata)
        bundle.devices = [device]
        if document.hasRedactedHistory {
            _ = try bundle.writeSnapshot()
        } else {
            try bundle.persist(document.allChanges())
        }
        return bundle
    }

    /// Opens the bundle at `path` for `device`: loads every snapshot, every device's log and
    /// every conflict copy into one document. A corrupt canonical file or an undecodable change
    /// throws `.corrupt` (it could hide changes); damage confined to conflict copies and torn
    /// tails are recorded in `warnings`, and so are files still arriving (iCloud placeholders,
    /// sync-tool downloads). Duplicate bundles beside it (`paper 2.imprint`) are merged into the
    /// document too, read-only: `sync()` makes their changes durable and removes them.
    /// A folder whose metadata.json has not arrived yet throws `.bundle` with code
    /// `.incomplete`; one that is no bundle at all, `.notFound`.
    public static func open(at path: String, device: DeviceID, actor: ActorID? = nil) throws(StoreError) -> DocumentBundle {
        let store = try StoreError.wrapping { try BundleStore.open(at: path, device: device) }
        let contents = try StoreError.wrapping { try store.load() }
        let actor = actor ?? Self.newActor(for: device)
        var ingest = Ingest()
        let document = try ingest.build(from: contents, actor: actor)
        let body: ObjectID
        do {
            body = try DocumentSchema.body(of: document)
        } catch .incomplete(let reason) where !ingest.damage.isEmpty {
            // Not "still arriving": the bundle is damaged and what is left lacks the body.
            throw .corrupt("\(reason), and the bundle is damaged: \(ingest.damage.joined(separator: "; "))", path: path)
        }
        let bundle = DocumentBundle(store: store, document: document, body: body, metadata: contents.metadata)
        bundle.warnings = ingest.warnings
        bundle.damage = ingest.damage
        bundle.loadedHashes = contents.knownHashes
        bundle.changeSources = contents.sources
        bundle.devices = Set((contents.logReports + contents.snapshotReports).map(\.device)).union([device])
        bundle.ownLogRecords = contents.logReports.first { $0.device == device && !$0.isConflictCopy }?.records ?? 0
        // Duplicate bundles (`paper 2.imprint`) are read too, without touching them, so what
        // they hold shows before the next sync folds them in.
        _ = try bundle.readDuplicates()
        return bundle
    }

    static func newActor(for device: DeviceID) -> ActorID {
        var generator = SystemRandomNumberGenerator()
        return SessionActor.make(for: device, using: &generator)
    }

    // MARK: Reading

    /// The body text.
    public func text() throws(StoreError) -> String {
        try StoreError.wrapping { try document.text(body) }
    }

    /// The whole document as JSON (the body as a string).
    public func jsonValue() throws(StoreError) -> ImprintCRDT.JSONValue {
        try StoreError.wrapping { try document.jsonValue() }
    }

    // MARK: Editing

    /// Runs `edit` as one local change on the document (given the body object) and appends
    /// the change to this device's log; durable when this returns. If `edit` throws after
    /// applying some ops, those ops are still persisted (the engine keeps them), then the
    /// error is rethrown.
    @discardableResult
    public func change<T>(message: String? = nil, time: Int64? = nil,
                          _ edit: (Transaction, ObjectID) throws -> T) throws(StoreError) -> T {
        let before = document.currentHeads
        let body = self.body
        let result: Result<T, StoreError>
        do {
            result = .success(try document.change(message: message, time: time) { tx in try edit(tx, body) })
        } catch {
            result = .failure(StoreError.wrap(error))
        }
        if batchDepth == 0 { try persist(document.changes(since: before)) }
        return try result.get()
    }

    /// Runs `edits` (any number of this bundle's editing calls) with their changes kept in
    /// memory, hands those changes to `beforePersisting`, then appends them to this device's
    /// log in one write: durable when this returns, as one edit's change is. The changes are
    /// persisted also when `edits` throws (as ``change(message:time:_:)`` persists the ops a
    /// failing edit applied), and the error is then rethrown.
    ///
    /// Two uses: several edits cost one fsync instead of one each, and `beforePersisting`
    /// sees the changes before the write starts, so a caller can show them elsewhere (a
    /// shared document relays them to the members watching it) while the disk works. A
    /// crash during the write loses the batch's changes here, as it would lose an edit
    /// whose call had not returned; whatever `beforePersisting` did with them stands.
    ///
    /// ```swift
    /// try bundle.batch {
    ///     try bundle.insert("Dear Ada,", at: 0)
    ///     try bundle.set("title", to: "Letter")
    /// } beforePersisting: { changes in
    ///     relay(changes)
    /// }
    /// ```
    ///
    /// A batch inside another is part of it: the outermost one persists, and calls
    /// `beforePersisting`, once.
    @discardableResult
    public func batch<T>(_ edits: () throws -> T, beforePersisting: ([Change]) -> Void = { _ in }) throws -> T {
        let before = document.currentHeads
        batchDepth += 1
        let result = Result { try edits() }
        batchDepth -= 1
        if batchDepth == 0 {
            let changes = document.changes(since: before)
            if !changes.isEmpty {
                beforePersisting(changes)
                try persist(changes)
            }
        }
        return try result.get()
    }

    /// Inserts `text` at code-point `position` of the body.
    public func insert(_ text: String, at position: Int, message: String? = nil, time: Int64? = nil) throws(StoreError) {
        let length = try bodyLength()
        guard position >= 0, position <= length else {
            throw .invalidRequest("position \(position) is outside the body (0...\(length))")
        }
        guard !text.isEmpty else { return }
        try change(message: message, time: time) { tx, body in try tx.splice(body, at: position, insert: text) }
    }

    /// Deletes `count` code points of the body from `position`.
    public func delete(at position: Int, count: Int, message: String? = nil, time: Int64? = nil) throws(StoreError) {
        let length = try bodyLength()
        guard position >= 0, count >= 0, position + count <= length else {
            throw .invalidRequest("range \(position)..<\(position + count) is outside the body (length \(length))")
        }
        guard count > 0 else { return }
        try change(message: message, time: time) { tx, body in try tx.splice(body, at: position, delete: count) }
    }

    /// Sets a metadata field of the root map to a string. `title` is mirrored into
    /// metadata.json; `body` and `schema` are refused.
    public func set(_ key: String, to value: String, message: String? = nil, time: Int64? = nil) throws(StoreError) {
        guard !key.isEmpty, !DocumentSchema.reservedKeys.contains(key), !key.hasPrefix(DocumentSchema.assetKeyPrefix),
              !key.hasPrefix(DocumentSchema.commentKeyPrefix) else {
            throw .invalidRequest("\"\(key)\" cannot be set (reserved: \(DocumentSchema.reservedKeys.sorted().joined(separator: ", ")))")
        }
        try change(message: message, time: time) { tx, _ in try tx.put(.root, key, .scalar(.string(value))) }
        if key == DocumentSchema.titleKey {
            metadata = try StoreError.wrapping { try store.updateMetadata { $0.title = value } }
        }
    }

    /// Makes the body equal to `newText` through a minimal diff (`TextDiff`), applied as
    /// splices in one change. Returns the splices (empty when nothing changed).
    @discardableResult
    public func replaceBody(with newText: String, message: String? = nil, time: Int64? = nil) throws(StoreError) -> [TextDiff.Splice] {
        let diff = TextDiff(from: try text(), to: newText)
        guard !diff.splices.isEmpty else { return [] }
        try change(message: message, time: time) { tx, body in
            for s in diff.splices.reversed() {
                try tx.splice(body, at: s.position, delete: s.deleteCount, insert: s.insert)
            }
        }
        return diff.splices
    }

    func bodyLength() throws(StoreError) -> Int {
        try StoreError.wrapping { try document.length(body) }
    }

    // MARK: Persisting

    /// Appends `changes` (those the bundle does not hold yet) to this device's log; durable
    /// when this returns.
    func persist(_ changes: [Change]) throws(StoreError) {
        var records: [ImprintBundle.LogRecord] = []
        for change in changes {
            let hash = try StoreError.wrapping { try ImprintBundle.RecordHash(bytes: change.hash.bytes) }
            guard !loadedHashes.contains(hash) else { continue }
            records.append(ImprintBundle.LogRecord(hash: hash, bytes: change.bytes))
        }
        guard !records.isEmpty else { return }
        let result = try StoreError.wrapping { try store.append(records) }
        if let quarantined = result.quarantined {
            warnings.append("quarantined: this device's log was damaged; it was moved aside whole to \(quarantined) and every intact change continues in a fresh log")
        }
        loadedHashes.formUnion(records.map(\.hash))
    }

    /// Appends every change of the document that the bundle does not hold yet (after edits
    /// made on `document` directly, or after merging another copy). Returns how many.
    @discardableResult
    public func persistNewChanges() throws(StoreError) -> Int {
        let before = loadedHashes.count
        let heads = document.currentHeads
        // Everything at `persistedHeads` was persisted by the last call: only what is not
        // their ancestor can be new (`allChanges` would encode the whole history again).
        try persist(persistedHeads.map { document.changes(since: $0) } ?? document.allChanges())
        persistedHeads = heads
        return loadedHashes.count - before
    }
}
