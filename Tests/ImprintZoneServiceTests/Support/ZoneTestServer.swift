import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import ImprintZoneService

/// A server with the zone service beside the Delivery Service.
struct ZoneTestServer: Sendable {
    let server: RunningServer

    /// Builds the zone service on `store`, with a fresh data directory (blob files, staging).
    static func zoneService(_ configure: @escaping @Sendable (inout ZoneServiceConfiguration) -> Void = { _ in })
        -> @Sendable (any DeliveryStore) async throws -> [any XRPCService]
    {
        { store in
            var configuration = ZoneServiceConfiguration()
            configure(&configuration)
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-zones-\(UUID().uuidString)")
            return [try await ZoneService.open(delivery: store, dataDirectory: data, configuration: configuration, heartbeat: .seconds(1))]
        }
    }

    static func start(store: any DeliveryStore) async throws -> ZoneTestServer {
        ZoneTestServer(server: try await RunningServer.start(store: store, services: try await zoneService()(store)))
    }

    func client(_ signer: ServiceAuthSigner = ServiceAuthSigner()) -> ZoneTestClient {
        ZoneTestClient(baseURL: server.baseURL, signer: signer)
    }

    /// A Delivery Service client for the same caller as `zone`.
    func delivery(_ zone: ZoneTestClient) -> DeliveryClient { server.client(zone.signer) }

    func stop() async throws { try await server.stop() }
}

/// Runs `body` against a fresh zone server of `kind` and always stops it.
func withZoneServer<T>(
    _ kind: StoreKind, configure: @escaping @Sendable (inout ZoneServiceConfiguration) -> Void = { _ in },
    _ body: (ZoneTestServer) async throws -> T
) async throws -> T {
    try await withServer(kind, services: ZoneTestServer.zoneService(configure)) { try await body(ZoneTestServer(server: $0)) }
}

/// Two zone servers on one fresh PostgreSQL database (two stateless instances).
func withTwoZoneInstances<T>(_ body: (ZoneTestServer, ZoneTestServer) async throws -> T) async throws -> T {
    try await withTwoPostgresInstances(services: ZoneTestServer.zoneService()) { try await body(ZoneTestServer(server: $0), ZoneTestServer(server: $1)) }
}
