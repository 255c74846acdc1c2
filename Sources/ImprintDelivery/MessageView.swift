import Foundation

/// The two kinds of message the service sequences.
public enum MessageType: String, Codable, Hashable, Sendable, CaseIterable {
    case app
    case commit
}

/// Metadata of one sequenced message; the ciphertext itself lives in zones.
public struct MessageView: Codable, Hashable, Sendable {
    public var seq: Int
    public var epoch: Int
    public var sender: String
    public var messageType: MessageType
    public var hash: String
    public var size: Int
    public var sentAt: Date
    public var recordName: String?
    /// v1.1: a commit entry's bytes (an MLSMessage), returned by `getMessages` so the epoch
    /// the Delivery Service holds always has its commit. Absent from events and app entries.
    public var commit: Data?

    public init(
        seq: Int, epoch: Int, sender: String, messageType: MessageType, hash: String, size: Int,
        sentAt: Date, recordName: String?, commit: Data? = nil
    ) {
        self.commit = commit
        self.seq = seq
        self.epoch = epoch
        self.sender = sender
        self.messageType = messageType
        self.hash = hash
        self.size = size
        self.sentAt = sentAt
        self.recordName = recordName
    }
}
