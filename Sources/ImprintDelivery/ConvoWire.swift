import Foundation

/// `createConvo` input.
public struct CreateConvoInput: Codable, Hashable, Sendable {
    public var convoId: String?
    public var title: String?
    public var cipherSuite: Int
    public init(convoId: String? = nil, title: String? = nil, cipherSuite: Int) {
        self.convoId = convoId
        self.title = title
        self.cipherSuite = cipherSuite
    }
}

/// `createConvo` output.
public struct CreateConvoOutput: Codable, Hashable, Sendable {
    public var convo: ConvoView
    public init(convo: ConvoView) { self.convo = convo }
}

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
