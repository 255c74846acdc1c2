/// How far a member has processed a convo's message stream: the Delivery Service's
/// `(epoch, seq)` of the last message applied. Saved with the group state in one
/// transaction (`KeyStore.saveGroupState`), so after a crash the two always agree.
public struct ProcessedCursor: Hashable, Sendable, Comparable {
    public var epoch: UInt64
    public var seq: UInt64

    public init(epoch: UInt64, seq: UInt64) {
        self.epoch = epoch
        self.seq = seq
    }

    /// Nothing processed yet.
    public static let start = ProcessedCursor(epoch: 0, seq: 0)

    public static func < (lhs: ProcessedCursor, rhs: ProcessedCursor) -> Bool {
        (lhs.epoch, lhs.seq) < (rhs.epoch, rhs.seq)
    }
}

/// A convo's serialized MLS group state and the cursor saved with it.
public struct GroupStateRecord: Hashable, Sendable {
    /// The serialized group (`MLSGroup.serializedState()`): holds the epoch's secrets.
    public var state: [UInt8]
    public var cursor: ProcessedCursor

    public init(state: [UInt8], cursor: ProcessedCursor) {
        self.state = state
        self.cursor = cursor
    }
}
