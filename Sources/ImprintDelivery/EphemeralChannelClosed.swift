/// The service closed an ``EphemeralChannel`` for a reason: the WebSocket close code and the
/// reason, `<ErrorName>: <message>` with the contract's error names (`NotMember`: the member
/// was removed or left; `InvalidRequest`: a send broke `sendEphemeral`'s rules).
public struct EphemeralChannelClosed: Error, Hashable, Sendable, CustomStringConvertible {
    /// The close code: 1008 (a malformed send), 1003 (a text frame), 1009 (a frame too long),
    /// 4403 (no longer a member), 1011 (the service failed).
    public var code: Int
    public var reason: String

    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The contract error name the reason starts with (`NotMember`, `InvalidRequest`), if any.
    public var name: String? {
        guard let colon = reason.firstIndex(of: ":") else { return nil }
        return String(reason[..<colon])
    }

    public var description: String { "ephemeral socket closed (\(code)): \(reason)" }
}
