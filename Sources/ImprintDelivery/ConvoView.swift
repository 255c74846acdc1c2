import Foundation

/// A conversation (a shared document) as the service describes it.
public struct ConvoView: Codable, Hashable, Sendable {
    public struct Member: Codable, Hashable, Sendable {
        public var did: String
        public var joinedAt: Date
        public init(did: String, joinedAt: Date) {
            self.did = did
            self.joinedAt = joinedAt
        }
    }

    public var id: String
    public var creator: String
    public var title: String?
    public var cipherSuite: Int
    public var epoch: Int
    public var createdAt: Date
    /// Active members only.
    public var members: [Member]
    /// v1.1: who may call `addMembers`/`removeMember`: the creator (always, first), then the
    /// DIDs it named, sorted. Absent from v1 servers.
    public var admins: [String]?

    public init(
        id: String, creator: String, title: String?, cipherSuite: Int, epoch: Int,
        createdAt: Date, members: [Member], admins: [String]? = nil
    ) {
        self.admins = admins
        self.id = id
        self.creator = creator
        self.title = title
        self.cipherSuite = cipherSuite
        self.epoch = epoch
        self.createdAt = createdAt
        self.members = members
    }
}
