import Foundation

/// v1.3 `updateCursor` input: the caller has processed every message of `convoId` up to and
/// including `processedSeq`.
///
/// The stored cursor only moves forward: a lower value (a retry that arrives late, a second
/// device of the same identity) leaves it where it is. Compaction deletes nothing a member
/// has not passed, so a member that never acknowledges holds its convo's ciphertext in place.
public struct UpdateCursorInput: Codable, Hashable, Sendable {
    public var convoId: String
    public var processedSeq: Int
    public init(convoId: String, processedSeq: Int) {
        self.convoId = convoId
        self.processedSeq = processedSeq
    }
}

/// v1.3 `updateCursor` output: the cursor as stored after the call.
public struct UpdateCursorOutput: Codable, Hashable, Sendable {
    public var processedSeq: Int
    public init(processedSeq: Int) { self.processedSeq = processedSeq }
}

/// v1.3 `markCheckpoint` input: `seq` is an application message the caller sent whose
/// payload holds the whole document (a snapshot), so a member past it needs nothing before it.
public struct MarkCheckpointInput: Codable, Hashable, Sendable {
    public var convoId: String
    public var seq: Int
    public init(convoId: String, seq: Int) {
        self.convoId = convoId
        self.seq = seq
    }
}

/// One active member's processed cursor, as `getCursors` lists it.
public struct MemberCursorView: Codable, Hashable, Sendable {
    public var did: String
    public var processedSeq: Int
    /// When the member last moved its cursor (nil: never since it joined).
    public var updatedAt: Date?
    /// When the member was (last) added.
    public var joinedAt: Date?
    public init(did: String, processedSeq: Int, updatedAt: Date?, joinedAt: Date? = nil) {
        self.did = did
        self.processedSeq = processedSeq
        self.updatedAt = updatedAt
        self.joinedAt = joinedAt
    }

    /// The last sign of life the Delivery Service has of this member: its last acknowledgement,
    /// else when it was added.
    public var lastSeen: Date? { updatedAt ?? joinedAt }
}

/// v1.3 `getCursors` output: every active member's cursor, and where compaction stands.
public struct GetCursorsOutput: Codable, Hashable, Sendable {
    public var cursors: [MemberCursorView]
    /// The newest checkpoint every active member has processed: the zone needs no change set
    /// below it (nil: there is none yet).
    public var compactableBefore: Int?
    /// The first seq the service still keeps (1 when nothing was compacted): `getMessages`
    /// answers from here.
    public var firstKeptSeq: Int
    public init(cursors: [MemberCursorView], compactableBefore: Int?, firstKeptSeq: Int) {
        self.cursors = cursors
        self.compactableBefore = compactableBefore
        self.firstKeptSeq = firstKeptSeq
    }
}
