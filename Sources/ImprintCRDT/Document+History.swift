extension Document {
    /// A new document holding only the changes in the ancestry of `heads` (all of them
    /// when nil), writing as `actor`. Edits to either document do not affect the other.
    /// Unknown heads throw `.unknownHeads`.
    public func fork(at heads: [ChangeHash]? = nil, actor: ActorID = .random()) throws -> Document {
        try completeLoad()
        prepareHistory()
        let mask = try heads.map { ancestryMask(try recordIndices($0)) } ?? [Bool](repeating: true, count: records.count)
        let doc = Document(actor: actor)
        doc.coalescesLocalChanges = coalescesLocalChanges
        let included = records.indices.filter { mask[$0] }
        // A redacted change is replayed as this document holds it (deleted text as
        // `redactedCharacter`) and stays redacted in the fork: never sent, never saved in full.
        try doc.apply(included.map(replayableChange))
        doc.markRedacted(included.filter { redactedRecords.contains($0) }.map { records[$0].hash! })
        return doc
    }

    /// A read-only document as it was at `heads`: this one when `heads` are the current
    /// heads, else a cached fork. Never edit the result.
    func view(at heads: [ChangeHash]) throws -> Document {
        let key = try frontier(heads)
        if key == currentHeads { return self }
        if let v = historyViews.lookup(key) { return v }
        let v = try fork(at: key, actor: actor)
        historyViews.store(key, v)
        return v
    }

    /// The canonical name of the version `heads` describe: those of them that are not
    /// ancestors of another, sorted. Unknown heads throw `.unknownHeads`.
    func frontier(_ heads: [ChangeHash]) throws -> [ChangeHash] {
        let indices = Set(try recordIndices(heads))
        let covered = ancestryMask(indices.flatMap { records[$0].deps })
        return indices.filter { !covered[$0] }.map { records[$0].hash! }.sorted()
    }

    /// The content of a text object as of `heads`.
    public func text(_ obj: ObjectID, at heads: [ChangeHash]) throws -> String { try view(at: heads).text(obj) }

    /// The winning value at `key` of a map as of `heads`.
    public func get(_ obj: ObjectID, _ key: String, at heads: [ChangeHash]) throws -> Value? {
        try view(at: heads).get(obj, key)
    }

    /// The element at `index` of a list as of `heads`.
    public func get(_ obj: ObjectID, at index: Int, heads: [ChangeHash]) throws -> Value? {
        try view(at: heads).get(obj, at: index)
    }

    /// A map's keys as of `heads`, sorted.
    public func keys(_ obj: ObjectID, at heads: [ChangeHash]) throws -> [String] { try view(at: heads).keys(obj) }

    /// The length of an object as of `heads` (see ``length(_:)``).
    public func length(_ obj: ObjectID, at heads: [ChangeHash]) throws -> Int { try view(at: heads).length(obj) }

    /// The JSON-shaped view of `obj` as of `heads`.
    public func jsonValue(_ obj: ObjectID = .root, at heads: [ChangeHash]) throws -> JSONValue {
        try view(at: heads).jsonValue(obj)
    }
}

/// A few recent read-only forks of one document, by heads. A version named by its heads
/// never changes, so entries never go stale; the cache only bounds memory.
struct HistoryViewCache {
    static let capacity = 4
    private var entries: [(heads: [ChangeHash], doc: Document)] = []

    mutating func lookup(_ heads: [ChangeHash]) -> Document? {
        guard let i = entries.firstIndex(where: { $0.heads == heads }) else { return nil }
        let e = entries.remove(at: i)
        entries.append(e)
        return e.doc
    }

    mutating func store(_ heads: [ChangeHash], _ doc: Document) {
        if entries.count >= HistoryViewCache.capacity { entries.removeFirst() }
        entries.append((heads, doc))
    }
}
