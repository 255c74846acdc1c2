import ImprintServer

/// Runs `body` against two servers on one fresh PostgreSQL database (two stateless
/// instances), and always stops both.
package func withTwoPostgresInstances<T>(
    services: @Sendable (any DeliveryStore) async throws -> [any XRPCService] = { _ in [] },
    configure: (inout DeliveryServerConfiguration) -> Void = { _ in },
    _ body: (RunningServer, RunningServer) async throws -> T
) async throws -> T {
    let location = try await PostgresTestDatabase.create()
    let firstStore = try await StoreFactory.open(.postgres(location), logger: testLogger)
    let first = try await RunningServer.start(store: firstStore, services: try await services(firstStore), configure: configure)
    let second: RunningServer
    do {
        let secondStore = try await StoreFactory.open(.postgres(location), logger: testLogger)
        second = try await RunningServer.start(store: secondStore, services: try await services(secondStore), configure: configure)
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
