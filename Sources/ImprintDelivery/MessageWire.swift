import Foundation

/// `sendMessage` input.
public struct SendMessageInput: Codable, Hashable, Sendable {
    public var convoId: String
    public var epoch: Int
    public var messageType: MessageType
    public var hash: String
    public var size: Int
    public var recordName: String?
    /// v1.1: the sender's idempotency key (at most 64 characters, unique per sender and
    /// convo). A retry with the same id returns the first call's `seq` and `epoch` instead of
    /// taking a new seq, so a client that lost the answer never leaves a seq without its record.
    public var clientMessageId: String?
    /// v1.1: the commit's bytes (an MLSMessage), for `messageType == .commit`: the Delivery
    /// Service keeps them with the seq and returns them from `getMessages`.
    public var commit: Data?
    public init(
        convoId: String, epoch: Int, messageType: MessageType, hash: String, size: Int,
        recordName: String? = nil, clientMessageId: String? = nil, commit: Data? = nil
    ) {
        self.convoId = convoId
        self.epoch = epoch
        self.messageType = messageType
        self.hash = hash
        self.size = size
        self.recordName = recordName
        self.clientMessageId = clientMessageId
        self.commit = commit
    }
}

/// A member that should receive a message, and where.
public struct Recipient: Codable, Hashable, Sendable {
    public var did: String
    public var storage: StorageProvider
    public init(did: String, storage: StorageProvider) {
        self.did = did
        self.storage = storage
    }
}

/// `sendMessage` output.
public struct SendMessageOutput: Codable, Hashable, Sendable {
    public var seq: Int
    public var epoch: Int
    public var recipients: [Recipient]
    public var serverTime: Date
    public init(seq: Int, epoch: Int, recipients: [Recipient], serverTime: Date) {
        self.seq = seq
        self.epoch = epoch
        self.recipients = recipients
        self.serverTime = serverTime
    }
}

/// `getMessages` output.
public struct GetMessagesOutput: Codable, Hashable, Sendable {
    public var messages: [MessageView]
    /// The seq to pass as `sinceSeq` for the next page; absent when this page is the last.
    public var cursor: Int?
    public init(messages: [MessageView], cursor: Int?) {
        self.messages = messages
        self.cursor = cursor
    }
}

/// `registerStorage` input.
public struct RegisterStorageInput: Codable, Hashable, Sendable {
    public var provider: StorageProvider
    public init(provider: StorageProvider) { self.provider = provider }
}

/// `_health` output.
public struct HealthStatus: Codable, Hashable, Sendable {
    public var status: String
    public var version: String
    public var did: String
    public init(status: String, version: String, did: String) {
        self.status = status
        self.version = version
        self.did = did
    }
}
