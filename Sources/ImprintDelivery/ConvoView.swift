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

    public init(
        id: String, creator: String, title: String?, cipherSuite: Int, epoch: Int,
        createdAt: Date, members: [Member]
    ) {
        self.id = id
        self.creator = creator
        self.title = title
        self.cipherSuite = cipherSuite
        self.epoch = epoch
        self.createdAt = createdAt
        self.members = members
    }
}
