import Foundation

/// `addMembers` input.
public struct AddMembersInput: Codable, Hashable, Sendable {
    public var convoId: String
    public var epoch: Int
    public var dids: [String]
    public var commit: Data
    public var welcome: Data
    public init(convoId: String, epoch: Int, dids: [String], commit: Data, welcome: Data) {
        self.convoId = convoId
        self.epoch = epoch
        self.dids = dids
        self.commit = commit
        self.welcome = welcome
    }
}

/// `removeMember` input.
public struct RemoveMemberInput: Codable, Hashable, Sendable {
    public var convoId: String
    public var epoch: Int
    public var did: String
    public var commit: Data
    public init(convoId: String, epoch: Int, did: String, commit: Data) {
        self.convoId = convoId
        self.epoch = epoch
        self.did = did
        self.commit = commit
    }
}

/// Output of the epoch-advancing methods `addMembers` and `removeMember`.
public struct EpochAdvanceOutput: Codable, Hashable, Sendable {
    public var epoch: Int
    public var seq: Int
    public init(epoch: Int, seq: Int) {
        self.epoch = epoch
        self.seq = seq
    }
}

/// `getWelcome` output.
public struct GetWelcomeOutput: Codable, Hashable, Sendable {
    public var welcome: Data
    public var epoch: Int
    public init(welcome: Data, epoch: Int) {
        self.welcome = welcome
        self.epoch = epoch
    }
}
