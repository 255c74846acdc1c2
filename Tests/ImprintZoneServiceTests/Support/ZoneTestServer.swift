import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import ImprintZoneService

/// A server with the zone service beside the Delivery Service, on a fresh store of `kind`
/// and a fresh data directory (blob files, staged uploads).
struct ZoneTestServer: Sendable {
    let server: RunningServer
    let data: URL

    static func start(
        store: any DeliveryStore, data: URL? = nil, configure: (inout ZoneServiceConfiguration) -> Void = { _ in }
    ) async throws -> ZoneTestServer {
        let data = data ?? FileManager.default.temporaryDirectory.appendingPathComponent("imprint-zones-\(UUID().uuidString)")
        var configuration = ZoneServiceConfiguration()
        configure(&configuration)
        let zones = try await ZoneService.open(delivery: store, dataDirectory: data, configuration: configuration, heartbeat: .seconds(1))
        return ZoneTestServer(server: try await RunningServer.start(store: store, services: [zones]), data: data)
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
    _ kind: StoreKind, configure: (inout ZoneServiceConfiguration) -> Void = { _ in }, _ body: (ZoneTestServer) async throws -> T
) async throws -> T {
    let server = try await ZoneTestServer.start(store: try await kind.makeStore(), configure: configure)
    do {
        let result = try await body(server)
        try await server.stop()
        return result
    } catch {
        try? await server.stop()
        throw error
    }
}

/// Two zone servers on one fresh PostgreSQL database (two stateless instances).
func withTwoZoneInstances<T>(_ body: (ZoneTestServer, ZoneTestServer) async throws -> T) async throws -> T {
    let location = try await PostgresTestDatabase.create()
    let first = try await ZoneTestServer.start(store: try await StoreFactory.open(.postgres(location), logger: testLogger))
    let second: ZoneTestServer
    do {
        second = try await ZoneTestServer.start(store: try await StoreFactory.open(.postgres(location), logger: testLogger))
    } catch {
        try? await first.stop()
        throw error
    }
    do {
        let result = try await body(first, second)
        try await first.stop()
        try await second.stop()
        return result
    } catch {
        try? await first.stop()
        try? await second.stop()
        throw error
    }
}
