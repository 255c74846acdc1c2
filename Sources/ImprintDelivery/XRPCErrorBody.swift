/// The body of every error response: `{"error": "<Name>", "message": "<text>"}`,
/// plus `currentEpoch` on `EpochMismatch`.
public struct XRPCErrorBody: Codable, Hashable, Sendable, Error {
    public var error: String
    public var message: String
    public var currentEpoch: Int?

    public init(error: String, message: String, currentEpoch: Int? = nil) {
        self.error = error
        self.message = message
        self.currentEpoch = currentEpoch
    }
}
