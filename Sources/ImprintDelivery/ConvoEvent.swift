import Foundation

/// A `membership` event's action.
public enum MembershipAction: String, Codable, Hashable, Sendable {
    case added
    case removed
    case left
}

/// A `message` event: the MessageView plus its convo.
public struct MessageEvent: Codable, Hashable, Sendable {
    public var convoId: String
    public var message: MessageView

    public init(convoId: String, message: MessageView) {
        self.convoId = convoId
        self.message = message
    }

    private enum CodingKeys: String, CodingKey { case convoId }

    public init(from decoder: Decoder) throws {
        convoId = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .convoId)
        message = try MessageView(from: decoder)
    }

    public func encode(to encoder: Encoder) throws {
        try message.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(convoId, forKey: .convoId)
    }
}

/// A `membership` event.
public struct MembershipEvent: Codable, Hashable, Sendable {
    public var convoId: String
    public var did: String
    public var action: MembershipAction
    public init(convoId: String, did: String, action: MembershipAction) {
        self.convoId = convoId
        self.did = did
        self.action = action
    }
}

/// A `welcome` event: a Welcome waits for the subscriber in this convo.
public struct WelcomeEvent: Codable, Hashable, Sendable {
    public var convoId: String
    public init(convoId: String) { self.convoId = convoId }
}

/// One event of `subscribeConvoEvents`, as named by the SSE `event:` field.
public enum ConvoEventPayload: Hashable, Sendable {
    case message(MessageEvent)
    case membership(MembershipEvent)
    case welcome(WelcomeEvent)

    /// The SSE `event:` name.
    public var name: String {
        switch self {
        case .message: "message"
        case .membership: "membership"
        case .welcome: "welcome"
        }
    }

    public var convoId: String {
        switch self {
        case .message(let event): event.convoId
        case .membership(let event): event.convoId
        case .welcome(let event): event.convoId
        }
    }

    /// The SSE `data:` JSON (a `message` event, written on every `sendMessage`, by hand:
    /// the same bytes as `WireJSON.encoder()`).
    public func encodedData() throws -> Data {
        switch self {
        case .message(let event): return Data(event.wireJSON())
        case .membership(let event): return try WireJSON.encoder().encode(event)
        case .welcome(let event): return try WireJSON.encoder().encode(event)
        }
    }

    public init(name: String, data: Data) throws {
        let decoder = WireJSON.decoder()
        switch name {
        case "message": self = .message(try decoder.decode(MessageEvent.self, from: data))
        case "membership": self = .membership(try decoder.decode(MembershipEvent.self, from: data))
        case "welcome": self = .welcome(try decoder.decode(WelcomeEvent.self, from: data))
        default: throw ConvoEventDecodingError(name: name)
        }
    }
}

/// An event with its resumable cursor (the SSE `id:`).
public struct ConvoEvent: Hashable, Sendable {
    public var cursor: Int64
    public var payload: ConvoEventPayload
    public init(cursor: Int64, payload: ConvoEventPayload) {
        self.cursor = cursor
        self.payload = payload
    }
}

public struct ConvoEventDecodingError: Error, Hashable, Sendable {
    public var name: String
}
