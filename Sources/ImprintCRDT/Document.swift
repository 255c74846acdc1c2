import Foundation

/// A collaborative document: a root map holding nested maps, lists, text and scalars,
/// with its full change history.
///
/// Edit it inside ``change(message:time:_:)``; exchange ``Change``s (or use ``merge(_:)-(Document)``,
/// ``save()`` / ``load(_:actor:)``, or the sync protocol) to converge with other replicas.
/// A `Document` is not thread-safe: confine it to one task or actor.
public final class Document {
    // Exclusivity. Swift checks at run time that no two accesses to a class's stored property
    // overlap when it cannot prove it at compile time, and for the properties below it cannot:
    // an in-place mutation may release a value, which could run arbitrary code. Those checks
    // took about a third of local editing time (Benchmarks/RESULTS.md, session 20). So the
    // properties every edit touches, here and in `SequenceState`, `SpanLeaf` and
    // `ChangeRecord`, are `@exclusivity(unchecked)` in release builds only: debug builds, in
    // which every test runs (the fuzzers of hostile changes included), keep the checks and
    // trap on an overlap. Their accesses are plain reads and in-place mutations of arrays,
    // sets and dictionaries whose elements' deinitializers never touch a document.

    /// The actor this replica writes as.
    public private(set) var actor: ActorID

    // Actor table: document-local indices to ids.
    #if DEBUG
    var actors: [ActorID] = []
    #else
    @exclusivity(unchecked) var actors: [ActorID] = []
    #endif
    var actorIndex: [ActorID: Int32] = [:]
    var selfActor: Int32 = 0
    /// The actor `internalID` found last (an index into `actors`; checked before use).
    var lastLookedUpActor: Int32 = 0

    /// Every object by id. A document opened by `load` whose history is not decoded yet
    /// (``DeferredLoad``) decodes and validates it on first access of this or any other
    /// history property.
    var objects: [OpID: ObjectState] {
        _read {
            if deferredLoad != nil { completeDeferredLoad() }
            yield storedObjects
        }
        _modify {
            if deferredLoad != nil { completeDeferredLoad() }
            lastState = nil
            yield &storedObjects
        }
    }
    /// The object `state(_:)` found last: edits name one text over and over, and its
    /// dictionary lookup was ~3 % of replaying `automerge-paper`. Cleared by every write of
    /// the objects table (the `objects` accessor and each assignment of `storedObjects`).
    var lastState: (id: OpID, state: ObjectState)?
    #if DEBUG
    var storedObjects: [OpID: ObjectState] = [.root: .map(MapState())]
    #else
    @exclusivity(unchecked) var storedObjects: [OpID: ObjectState] = [.root: .map(MapState())]
    #endif
    /// Largest op counter seen (Lamport clock).
    var maxCounter: Int {
        _read {
            if deferredLoad != nil { completeDeferredLoad() }
            yield storedMaxCounter
        }
        _modify {
            if deferredLoad != nil { completeDeferredLoad() }
            yield &storedMaxCounter
        }
    }
    var storedMaxCounter: Int = 0

    // History.
    /// Every change, dependencies first. After a load they are built on first use from
    /// `loadedHistory` (see ``LoadedHistory``).
    var records: [ChangeRecord] {
        // (Once the deferred part is decoded, the stored history is read directly: every
        // access through an accessor costs a dynamic exclusivity check, and edits read
        // `records` several times each.)
        _read {
            if deferredLoad != nil { completeDeferredLoad() }
            if storedLoadedHistory != nil { materializeHistory() }
            yield storedRecords
        }
        _modify {
            if deferredLoad != nil { completeDeferredLoad() }
            if storedLoadedHistory != nil { materializeHistory() }
            yield &storedRecords
        }
    }
    #if DEBUG
    var storedRecords: [ChangeRecord] = []
    #else
    @exclusivity(unchecked) var storedRecords: [ChangeRecord] = []
    #endif
    var loadedHistory: LoadedHistory? {
        _read {
            if deferredLoad != nil { completeDeferredLoad() }
            yield storedLoadedHistory
        }
        _modify {
            if deferredLoad != nil { completeDeferredLoad() }
            yield &storedLoadedHistory
        }
    }
    var storedLoadedHistory: LoadedHistory?
    /// The number of changes, without building records that are still only loaded.
    var recordCount: Int {
        if deferredLoad != nil { completeDeferredLoad() }
        return storedLoadedHistory?.count ?? storedRecords.count
    }

    private func materializeHistory() {
        guard let history = loadedHistory else { return }
        loadedHistory = nil
        storedRecords = history.makeRecords()
        forgetRecordPositions()
    }

    /// Records below this index are all sealed: `sealAll` starts here.
    var sealedPrefix = 0
    /// The last few results of ``currentHeads`` with the number of records at the time. Every
    /// record below that number is an ancestor of those heads and every later one is not
    /// (records are only ever appended, dependencies first), which lets
    /// ``changes(since:)`` answer for heads this document handed out by slicing instead of
    /// walking the whole history.
    #if DEBUG
    var headsMemo: [(heads: [ChangeHash], count: Int)] = []
    #else
    @exclusivity(unchecked) var headsMemo: [(heads: [ChangeHash], count: Int)] = []
    #endif

    /// Forgets `sealedPrefix` and `headsMemo`, for when the records are replaced as a whole
    /// (a load, an adopted state).
    func forgetRecordPositions() {
        sealedPrefix = 0
        headsMemo = []
    }
    var recordByHash: [ChangeHash: Int] {
        _read {
            if deferredLoad != nil { completeDeferredLoad() }
            yield storedRecordByHash
        }
        _modify {
            if deferredLoad != nil { completeDeferredLoad() }
            yield &storedRecordByHash
        }
    }
    var storedRecordByHash: [ChangeHash: Int] = [:]
    var lastSeq: [Int32: Int] {
        _read {
            if deferredLoad != nil { completeDeferredLoad() }
            yield storedLastSeq
        }
        _modify {
            if deferredLoad != nil { completeDeferredLoad() }
            yield &storedLastSeq
        }
    }
    #if DEBUG
    var storedLastSeq: [Int32: Int] = [:]
    #else
    @exclusivity(unchecked) var storedLastSeq: [Int32: Int] = [:]
    #endif
    var lastRecordOfActor: [Int32: Int] {
        _read {
            if deferredLoad != nil { completeDeferredLoad() }
            yield storedLastRecordOfActor
        }
        _modify {
            if deferredLoad != nil { completeDeferredLoad() }
            yield &storedLastRecordOfActor
        }
    }
    var storedLastRecordOfActor: [Int32: Int] = [:]
    var heads: Set<Int> {
        _read {
            if deferredLoad != nil { completeDeferredLoad() }
            yield storedHeads
        }
        _modify {
            if deferredLoad != nil { completeDeferredLoad() }
            yield &storedHeads
        }
    }
    #if DEBUG
    var storedHeads: Set<Int> = []
    #else
    @exclusivity(unchecked) var storedHeads: Set<Int> = []
    #endif
    /// The records whose content a redacted save dropped (``HistoryRetention/redacted``):
    /// their hashes come from the save, their deleted text reads as
    /// ``Document/redactedCharacter``, and they are never handed out (`portableChanges`).
    /// Empty unless the document was loaded from (or adopted, or forked from) a redacted save.
    var redactedRecords = Set<Int>()
    /// Changes whose dependencies have not all arrived yet.
    var pending: [ChangeHash: Change] = [:]
    /// A local, unsealed change that is the only head: the next local transaction may extend it.
    var openRecord: Int?
    #if DEBUG
    /// Whether consecutive local changes may be coalesced into one (Loro does the same).
    public var coalescesLocalChanges = true
    #else
    /// Whether consecutive local changes may be coalesced into one (Loro does the same).
    @exclusivity(unchecked) public var coalescesLocalChanges = true
    #endif

    #if DEBUG
    /// The undo stack (``undo()``).
    var undoLog = UndoLog()
    #else
    /// The undo stack (``undo()``).
    @exclusivity(unchecked) var undoLog = UndoLog()
    #endif
    #if DEBUG
    /// How many local transactions ``undo()`` can go back (older ones are forgotten).
    public var undoLimit = 1000
    #else
    /// How many local transactions ``undo()`` can go back (older ones are forgotten).
    @exclusivity(unchecked) public var undoLimit = 1000
    #endif
    #if DEBUG
    var redoStack: [UndoEntry] = []
    #else
    @exclusivity(unchecked) var redoStack: [UndoEntry] = []
    #endif
    var recordingUndo = true
    var replaying = false
    /// Leaf size for new sequences (tests lower it).
    var leafCapacity = SpanLeaf.capacity
    /// Loaded changes whose insert ops still live only in the sequences' spans (a load
    /// fills an empty document, so these are always its first records).
    var insertsMissing: Range<Int> {
        _read {
            if deferredLoad != nil { completeDeferredLoad() }
            yield storedInsertsMissing
        }
        _modify {
            if deferredLoad != nil { completeDeferredLoad() }
            yield &storedInsertsMissing
        }
    }
    var storedInsertsMissing: Range<Int> = 0..<0
    /// How many records the last save covered (for incremental saves).
    var savedRecordCount = 0
    /// Undo re-inserts deleted items as new items; this maps old item ids to their
    /// replacements so older undo entries still find them.
    var undoReplacements: [OpID: OpID] = [:]
    /// Recent read-only forks, for reads at past heads (`Document+History.swift`).
    var historyViews = HistoryViewCache()
    /// A loaded document's payload whose history is not decoded yet (see ``DeferredLoad``).
    var deferredLoad: DeferredLoad?
    /// Why the deferred part of the load failed: the document then holds nothing, and every
    /// throwing call rethrows this.
    var loadError: CRDTError?
    /// The payload whose deferred load failed, with its version: what `save()` writes for
    /// such a document, so that saving it never replaces a damaged document by an empty one.
    var unloadablePayload: (payload: [UInt8], version: UInt8)?

    /// Who follows this document's patches (`patches()`), whether anyone may, and the
    /// patches of the transaction in progress.
    let patchSubscribers = PatchSubscribers()
    var patchesWanted = false
    #if DEBUG
    var localPatches: [Patch] = []
    #else
    @exclusivity(unchecked) var localPatches: [Patch] = []
    #endif
    /// The patches of the remote changes being integrated, while anyone listens (see
    /// `publishingRemotePatches`).
    var remotePatches: RemotePatchLog?
    /// How many remote batches were published as a diff rather than op by op (for tests).
    var remoteBatchesDiffed = 0

    // Transaction in progress.
    var txnMessage: String?
    var txnTime: Int64?
    var txnHasChange = false
    var openRecordCandidate: Int?

    /// Creates an empty document written by `actor` (a random one by default).
    public init(actor: ActorID = .random()) {
        self.actor = actor
        selfActor = intern(actor)
    }

    /// Makes later local changes come from another actor.
    public func setActor(_ a: ActorID) {
        sealOpen()
        actor = a
        selfActor = intern(a)
    }

    @discardableResult
    func intern(_ a: ActorID) -> Int32 {
        if let i = actorIndex[a] { return i }
        let i = Int32(actors.count)
        actors.append(a)
        actorIndex[a] = i
        return i
    }

    @inline(__always)
    func actorLess(_ a: Int32, _ b: Int32) -> Bool {
        a != b && actors[Int(a)] < actors[Int(b)]
    }

    // MARK: Object ids

    func internalID(_ o: ObjectID) throws -> OpID {
        guard let a = o.actor else { return .root }
        // Edits name the same object over and over: try the actor found last before hashing.
        // Actors are unique in the table, so a match is the right index whatever happened since.
        let last = Int(lastLookedUpActor)
        if last < actors.count, actors[last] == a { return OpID(counter: o.counter, actor: lastLookedUpActor) }
        guard let i = actorIndex[a] else { throw CRDTError(.noSuchObject, "no object \(o)") }
        lastLookedUpActor = i
        return OpID(counter: o.counter, actor: i)
    }

    func publicID(_ o: OpID) -> ObjectID {
        o.actor < 0 ? .root : ObjectID(counter: o.counter, actor: actors[Int(o.actor)])
    }

    func state(_ o: ObjectID) throws -> (OpID, ObjectState) {
        try completeLoad()
        let id = try internalID(o)
        if let last = lastState, last.id == id { return last }
        // Complete now (`completeLoad`): the objects are read without the accessor's check.
        guard let s = storedObjects[id] else { throw CRDTError(.noSuchObject, "no object \(o)") }
        lastState = (id, s)
        return (id, s)
    }

    // MARK: Heads and sealing

    /// The hashes of the changes nothing else depends on yet: this version's name.
    public var currentHeads: [ChangeHash] {
        sealOpen()
        // A local change concurrent with a remote one stops being open without being sealed.
        for h in heads where records[h].hash == nil { seal(h) }
        let result = heads.map { records[$0].hash! }.sorted()
        if headsMemo.count == 4 { headsMemo.removeFirst() }
        headsMemo.append((result, records.count))
        return result
    }

    /// Seals the open local change so it gets a hash and can no longer grow.
    func sealOpen() {
        if let i = openRecord {
            seal(i)
            openRecord = nil
        }
    }

    func seal(_ i: Int) {
        let r = records[i]
        guard r.hash == nil else { return }
        if insertsMissing.contains(i) { materializeInserts() }
        // Dependencies always have lower indices: seal unsealed ones oldest first, without
        // recursion (a loaded history can be a chain of hundreds of thousands of changes).
        if r.deps.contains(where: { records[$0].hash == nil }) {
            for j in 0..<i where records[j].hash == nil { sealOne(j) }
        }
        sealOne(i)
    }

    /// Seals record `i` whose dependencies are all sealed.
    private func sealOne(_ i: Int) {
        let r = records[i]
        guard r.hash == nil else { return }
        let deps = r.deps.map { records[$0].hash! }
        let bytes = ChangeCoding.encode(r, depHashes: deps) { actors[Int($0)] }
        let h = ChangeHash(unchecked: SHA256Digest.of(bytes))
        r.bytes = bytes
        r.hash = h
        recordByHash[h] = i
    }

    func sealAll() {
        sealOpen()
        let count = records.count
        for i in min(sealedPrefix, count)..<count where records[i].hash == nil { seal(i) }
        sealedPrefix = count
    }

    /// Adds a record to the history and makes it a head.
    func appendRecord(_ r: ChangeRecord) -> Int {
        let i = records.count
        records.append(r)
        for d in r.deps { heads.remove(d) }
        heads.insert(i)
        lastSeq[r.actor] = r.seq
        lastRecordOfActor[r.actor] = i
        if let h = r.hash { recordByHash[h] = i }
        return i
    }

    /// Current time in milliseconds.
    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
