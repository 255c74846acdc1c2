import Foundation

/// Everything the Delivery Service can be tuned with; defaults are the contract's.
public struct DeliveryServerConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    public var serviceDID: String
    public var version: String = DeliveryServerConfiguration.serviceVersion

    /// Body limit for `addMembers` / `removeMember` (commit + Welcome).
    public var largeBodyLimit = 1 << 20
    /// Body limit for every other method.
    public var bodyLimit = 64 << 10
    public var maxMessagesPerPage = 1000
    /// v1.2: largest `sendEphemeral` message (presence is a few hundred bytes).
    public var maxEphemeralBytes = 2048
    /// An ephemeral socket whose send buffer has stayed full this long while messages kept
    /// coming for it (its member stopped reading) is dropped; its client reconnects if it is
    /// alive. Until then it only misses messages.
    public var ephemeralStallTimeout: Duration = .seconds(60)
    public var defaultMessagesPerPage = 100
    public var maxKeyPackagesPerDID = 200
    public var maxDIDsPerKeyPackageRequest = 50
    public var rateLimitPerSecond: Double = 100
    public var rateLimitBurst: Double = 500
    /// Seconds between SSE keep-alive comments.
    public var eventHeartbeat: Duration = .seconds(15)
    /// Timeouts for slow clients and the per-address connection cap.
    public var connectionLimits = ConnectionLimits()
    /// How long events stay for subscribers to resume from (`EventRetention`); nil: forever.
    /// A subscriber away for longer misses the notifications, never a message: messages and
    /// Welcomes are read with `getMessages` and `getWelcome`, which this does not touch.
    public var eventRetention: Duration? = .seconds(30 * 24 * 3600)
    /// How often the server deletes the events older than `eventRetention`.
    public var eventRetentionSweep: Duration = .seconds(3600)

    /// The Delivery Service API version `_health` reports: the contract's v1 with the
    /// additions up to v1.5 (docs/delivery-service.md), so a client can tell what a server
    /// offers before calling it.
    public static let serviceVersion = "1.5.0"

    public init(serviceDID: String? = nil, host: String = "127.0.0.1", port: Int = 8080) {
        self.host = host
        self.port = port
        self.serviceDID = serviceDID ?? "did:web:\(host)"
    }
}
