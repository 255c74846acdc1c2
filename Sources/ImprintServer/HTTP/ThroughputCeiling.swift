import Hummingbird
import NIOCore

/// Two routes that move bytes through the server's whole HTTP path (connection limits, body
/// timeouts, request log, authentication gate, rate limiter) and store nothing, so a benchmark
/// can set a zone method's throughput beside what the same server, on the same machine, in
/// the same run, can carry at all:
/// - `POST /xrpc/app.imprint.bench.discard` reads its body to the end and answers
///   `{"size": n}` (the ceiling of `uploadAsset` and `saveRecords`);
/// - `GET /xrpc/app.imprint.bench.source?size=n` answers `n` bytes (the ceiling of `getAsset`).
///
/// Off unless the operator asks (`imprint-server --benchmark-endpoints`): `imprint-bench zones`
/// starts its server with it. Both are authenticated XRPC methods like every other (so they
/// cost what a zone call costs before its handler), bounded by the zone service's asset limit,
/// and absent from the OpenAPI document, which describes the service people deploy.
package struct ThroughputCeiling: XRPCService {
    package static let discardNSID = "app.imprint.bench.discard"
    package static let sourceNSID = "app.imprint.bench.source"
    /// The most bytes either route moves in one request (the zone service's asset limit).
    package static let maximumBytes = 50 << 20

    package init() {}

    package var paths: [String] { ["/xrpc/\(Self.discardNSID)", "/xrpc/\(Self.sourceNSID)"] }

    package func routes(gate: XRPCGate, metrics: ServerMetrics) -> RouteCollection<DeliveryRequestContext> {
        let routes = RouteCollection(context: DeliveryRequestContext.self)
        routes.xrpc(nsid: Self.discardNSID, route: "bench.discard", procedure: true, gate: gate) { request, _ in
            var size = 0
            for try await chunk in request.body {
                size += chunk.readableBytes
                guard size <= Self.maximumBytes else { throw DeliveryError.payloadTooLarge(limit: Self.maximumBytes) }
            }
            return try json(DiscardOutput(size: size))
        }
        routes.xrpc(nsid: Self.sourceNSID, route: "bench.source", procedure: false, gate: gate) { request, _ in
            let query = try QueryParameters(query: request.uri.query ?? "", allowed: ["size"])
            guard let text = try query.single("size"), let size = Int(text), (0...Self.maximumBytes).contains(size) else {
                throw DeliveryError.invalidRequest("size must be an integer in 0...\(Self.maximumBytes)")
            }
            var headers = HTTPFields()
            headers[.contentType] = "application/octet-stream"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(repeating: 0x5A, count: size)))
        }
        return routes
    }

    package func shutdown() async throws {}

    struct DiscardOutput: Encodable {
        var size: Int
    }
}
