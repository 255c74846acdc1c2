/// The body of every error response: `{"error": "<Name>", "message": "<text>"}`,
/// plus `currentEpoch` on `EpochMismatch`.
public struct XRPCErrorBody: Codable, Hashable, Sendable, Error {
    public var error: String
    public var message: String
    public var currentEpoch: Int?

    /// The most bytes of an error answer a client reads to decode this body (a name, a
    /// sentence and a number fit many times over).
    package static let maximumBytes = 64 << 10

    public init(error: String, message: String, currentEpoch: Int? = nil) {
        self.error = error
        self.message = message
        self.currentEpoch = currentEpoch
    }
}
