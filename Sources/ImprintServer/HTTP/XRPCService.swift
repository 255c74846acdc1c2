import Hummingbird

/// Another family of XRPC routes served by the same process, beside the Delivery Service
/// (the zone service is one): same router, same authentication gate, same metrics.
package protocol XRPCService: Sendable {
    /// Every path the service answers, so that a wrong HTTP method is a 405, not a 404.
    var paths: [String] { get }
    /// The service's routes, each admitted by `gate` (or public where its contract says so).
    func routes(gate: XRPCGate, metrics: ServerMetrics) -> RouteCollection<DeliveryRequestContext>
    /// Releases what the service holds, after the server stopped.
    func shutdown() async throws
}
