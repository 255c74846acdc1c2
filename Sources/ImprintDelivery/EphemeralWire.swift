import Foundation

/// `sendEphemeral` input (v1.2): an opaque message the Delivery Service relays at once to the
/// convo's members who are subscribed now (`subscribeEphemeral`), and stores nowhere: no seq,
/// no event row, no replay for a subscriber who connects later. For presence (who is editing,
/// where their cursor is), already end-to-end encrypted by the sender.
public struct SendEphemeralInput: Codable, Hashable, Sendable {
    public var convoId: String
    /// The sender's epoch (members drop messages of another epoch).
    public var epoch: Int
    /// The ciphertext, at most `maxEphemeralBytes` (2 KiB by default).
    public var data: Data

    public init(convoId: String, epoch: Int, data: Data) {
        self.convoId = convoId
        self.epoch = epoch
        self.data = data
    }
}

/// One `ephemeral` event of `subscribeEphemeral`: a `sendEphemeral` of another member, with
/// the sender the Delivery Service authenticated.
public struct EphemeralMessage: Codable, Hashable, Sendable {
    public var convoId: String
    public var sender: String
    public var epoch: Int
    public var data: Data

    public init(convoId: String, sender: String, epoch: Int, data: Data) {
        self.convoId = convoId
        self.sender = sender
        self.epoch = epoch
        self.data = data
    }
}
