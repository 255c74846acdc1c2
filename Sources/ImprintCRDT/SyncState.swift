/// What one peer knows about another during a sync session (``Document/generateSyncMessage(_:)``,
/// ``Document/receiveSyncMessage(_:_:)``). Keep one per peer and connection.
///
/// Only ``sharedHeads`` survives ``encode()``: the rest describes a live session and starts
/// over on reconnect, which is also how a session recovers after a lost message.
public struct SyncState: Sendable, Equatable {
    static let encodingType: UInt8 = 0x43

    /// Heads both sides are known to have: the point the next Bloom filter starts from.
    public internal(set) var sharedHeads: [ChangeHash] = []
    /// The heads we last told the peer about.
    var lastSentHeads: [ChangeHash] = []
    /// The peer's heads, as of its last message (nil before the first one).
    public internal(set) var theirHeads: [ChangeHash]?
    /// The changes the peer asked for explicitly.
    var theirNeed: [ChangeHash]?
    /// The peer's summaries of what it has.
    var theirHave: [SyncMessage.Have]?
    /// Changes sent in this session, so none is sent twice.
    var sentHashes: Set<ChangeHash> = []
    /// Whether we answered the peer's last message yet.
    var haveResponded = false
    /// Whether we sent a message the peer has not answered yet.
    var inFlight = false

    /// A state for a new session with a peer we know nothing about.
    public init() {}

    /// The persistent part (the shared heads), for storing between sessions.
    public func encode() -> [UInt8] {
        var w = ByteWriter()
        w.byte(SyncState.encodingType)
        SyncMessage.writeHashes(sharedHeads, &w)
        return w.bytes
    }

    /// Restores a state saved by ``encode()``; the session part starts fresh.
    /// Malformed bytes throw ``CRDTError``.
    public init(decoding bytes: [UInt8]) throws {
        var r = ByteReader(bytes)
        let t = try r.byte()
        guard t == SyncState.encodingType else {
            throw CRDTError(.unsupportedVersion, "sync state type \(t), expected \(SyncState.encodingType)")
        }
        sharedHeads = try SyncMessage.readHashes(&r)
        guard r.isAtEnd else { throw CRDTError(.malformed, "trailing bytes after sync state") }
    }
}
