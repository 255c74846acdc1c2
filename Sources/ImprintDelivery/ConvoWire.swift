import Foundation

/// `createConvo` input.
public struct CreateConvoInput: Codable, Hashable, Sendable {
    public var convoId: String?
    /// Deprecated in v1.1 (a document's title is content): still accepted from v1 clients.
    public var title: String?
    public var cipherSuite: Int
    /// v1.1: DIDs besides the creator that may add and remove members (they need not be
    /// members yet).
    public var admins: [String]?
    public init(convoId: String? = nil, title: String? = nil, cipherSuite: Int, admins: [String]? = nil) {
        self.convoId = convoId
        self.title = title
        self.cipherSuite = cipherSuite
        self.admins = admins
    }
}

/// v1.1 `setAdmins` input: replaces the DIDs besides the creator that may add and remove
/// members; creator only, each an active member.
public struct SetAdminsInput: Codable, Hashable, Sendable {
    public var convoId: String
    public var admins: [String]
    public init(convoId: String, admins: [String]) {
        self.convoId = convoId
        self.admins = admins
    }
}

/// `createConvo` output.
public struct CreateConvoOutput: Codable, Hashable, Sendable {
    public var convo: ConvoView
    public init(convo: ConvoView) { self.convo = convo }
}

/// v1.1 `setAdmins` output: the updated convo.
public typealias SetAdminsOutput = CreateConvoOutput

/// `getConvos` output.
public struct GetConvosOutput: Codable, Hashable, Sendable {
    public var convos: [ConvoView]
    public init(convos: [ConvoView]) { self.convos = convos }
}

/// Input of the methods that name only a convo: `confirmWelcome`, `leaveConvo`.
public struct ConvoRefInput: Codable, Hashable, Sendable {
    public var convoId: String
    public init(convoId: String) { self.convoId = convoId }
}

/// The `{}` output of procedures that return nothing.
public struct EmptyOutput: Codable, Hashable, Sendable {
    public init() {}
}
