/// An error response from the Delivery Service: HTTP status and the decoded error body.
public struct DeliveryServiceError: Error, Hashable, Sendable, CustomStringConvertible {
    public var status: Int
    public var body: XRPCErrorBody

    public init(status: Int, body: XRPCErrorBody) {
        self.status = status
        self.body = body
    }

    /// The error name, e.g. `EpochMismatch`.
    public var name: String { body.error }

    public var description: String { "\(status) \(body.error): \(body.message)" }
}

/// A response the client could not understand (not the service's JSON).
public struct DeliveryProtocolError: Error, Hashable, Sendable {
    public var status: Int
    public var reason: String
}
