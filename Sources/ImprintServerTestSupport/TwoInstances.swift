import ImprintServer

/// Runs `body` against two servers on one fresh PostgreSQL database (two stateless
/// instances), and always stops both.
public func withTwoPostgresInstances<T>(_ body: (RunningServer, RunningServer) async throws -> T) async throws -> T {
    let location = try await PostgresTestDatabase.create()
    let first = try await RunningServer.start(store: try await StoreFactory.open(.postgres(location), logger: testLogger))
    let second: RunningServer
    do {
        second = try await RunningServer.start(store: try await StoreFactory.open(.postgres(location), logger: testLogger))
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
