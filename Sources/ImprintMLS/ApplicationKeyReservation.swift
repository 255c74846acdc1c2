/// Keys of this member's next application messages, taken out of the group's sending ratchet
/// ahead of use, so that one durable write of the group state covers several messages.
///
/// Sending with MLS consumes one generation of the member's application ratchet per message,
/// and a generation must never encrypt twice (its key and nonce would repeat). The plain
/// answer is to save the advanced ratchet before each ciphertext leaves: one key-store commit
/// per message. A reservation moves the ratchet `count` generations ahead at once and keeps
/// the skipped keys here, in memory only; the caller saves the group state once, then sends
/// up to `count` messages with ``MLSGroup/encrypt(_:authenticatedData:using:)`` without touching
/// the stored state again.
///
/// Guarantees:
/// - **No reuse.** The group state (and so anything saved from it) is already past every
///   reserved generation: a process that restarts from the saved state, or another process
///   sharing it, continues after the reservation. Each reserved key is handed out once.
/// - **Forward secrecy on disk.** Reserved keys are never part of ``MLSGroup/serializedState()``;
///   a key is dropped as soon as it has encrypted its message, and the rest with the
///   reservation. What is lost with a crash is only a run of unused generations: receivers
///   step over them (each keeps the skipped keys, within ``SecretTreeLimits``, until the epoch
///   ends), so keep `count` well below `maxSkippedKeys`.
/// - **One epoch.** A reservation belongs to the epoch it was taken in; once the group moves
///   on, `encrypt(using:)` refuses it (``MLSError/Code/wrongEpoch``): take a new one.
///
/// ```swift
/// var reserved = try group.reserveApplicationKeys(32)
/// try keyStore.saveGroupState(GroupStateRecord(state: group.serializedState(), cursor: cursor), convo: id, for: me)
/// let first = try group.encrypt(Array("hello".utf8), using: &reserved)   // no save needed
/// let second = try group.encrypt(Array("again".utf8), using: &reserved)
/// ```
public struct ApplicationKeyReservation: Sendable {
    /// The group and epoch the keys belong to.
    public let groupID: [UInt8]
    public let epoch: UInt64
    let leaf: UInt32
    /// The keys not handed out yet, lowest generation first.
    var keys: [RatchetKey]

    /// How many messages the reservation can still encrypt.
    public var remaining: Int { keys.count }

    /// The next key, removed from the reservation.
    mutating func take() throws(MLSError) -> RatchetKey {
        guard !keys.isEmpty else { throw MLSError(.secretConsumed, "every reserved application key has been used") }
        return keys.removeFirst()
    }
}

extension MLSGroup {
    /// Largest reservation ``reserveApplicationKeys(_:)`` takes at once.
    public static let maximumReservedApplicationKeys = 256

    /// Moves this member's application ratchet `count` generations ahead and returns their
    /// keys. Save the group state before using any of them (see ``ApplicationKeyReservation``).
    public mutating func reserveApplicationKeys(_ count: Int) throws -> ApplicationKeyReservation {
        guard (1...Self.maximumReservedApplicationKeys).contains(count) else {
            throw MLSError(.invalidValue, "reserve 1...\(Self.maximumReservedApplicationKeys) application keys, not \(count)")
        }
        var keys: [RatchetKey] = []
        keys.reserveCapacity(count)
        for _ in 0..<count { keys.append(try secretTree.nextKey(leaf: myLeaf, type: .application)) }
        return ApplicationKeyReservation(groupID: groupID, epoch: epoch, leaf: myLeaf, keys: keys)
    }

    /// Encrypts application data as a PrivateMessage with the next key of `reservation`. The
    /// group itself is not changed, so there is nothing to save.
    public func encrypt(_ data: [UInt8], authenticatedData: [UInt8] = [], using reservation: inout ApplicationKeyReservation) throws -> MLSMessage {
        guard reservation.groupID == groupID else { throw MLSError(.wrongGroup, "the reservation is for another group") }
        guard reservation.epoch == epoch, reservation.leaf == myLeaf else {
            throw MLSError(.wrongEpoch, "the reservation is for epoch \(reservation.epoch), the group is in epoch \(epoch)")
        }
        let key = try reservation.take()
        let framed = FramedContent(groupID: groupID, epoch: epoch, sender: .member(leafIndex: myLeaf), authenticatedData: authenticatedData,
                                   content: .application(data))
        return .privateMessage(try MessageProtection.protectPrivate(suite: cipherSuite, content: framed, confirmationTag: nil, context: context,
                                                                     signer: signer, senderDataSecret: secrets.senderDataSecret,
                                                                     key: key, paddingBlock: configuration.paddingBlock))
    }
}
