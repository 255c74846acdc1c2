/// How long the server waits for slow clients and how many connections one address may hold.
///
/// Every limit ends in a closed connection, never a 5xx and never a descriptor held forever:
///
/// - ``idleTimeout``: a connection must complete a request head within this time of opening
///   or of its previous response (Hummingbird's idle timeout), so a client that sends half a
///   head (slowloris) or idles between requests is closed. A request being processed, such as
///   a long event stream, is not idle.
/// - ``bodyIdleTimeout`` and ``bodyDeadline``: once a head has arrived, its body must keep
///   arriving (no gap longer than the idle timeout) and end within the deadline, or the
///   connection is closed (`RequestBodyTimeout`).
/// - ``maxConnectionsPerAddress``: open connections per client IP address that have not yet
///   carried an authenticated request (`ConnectionCap`); one more is closed as soon as it
///   opens. A connection stops counting once a request on it passes the token check, so
///   members behind one address are not capped, only clients that never authenticate.
///
/// ```swift
/// var configuration = DeliveryServerConfiguration(serviceDID: "did:web:example.com")
/// configuration.connectionLimits.maxConnectionsPerAddress = 4_096
/// ```
public struct ConnectionLimits: Sendable, Hashable {
    public var idleTimeout: Duration = .seconds(30)
    public var bodyIdleTimeout: Duration = .seconds(10)
    public var bodyDeadline: Duration = .seconds(120)
    public var maxConnectionsPerAddress = 256

    public init() {}
}
