import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOCore
import ImprintDelivery
import ImprintServer
import ServiceLifecycle

/// A Delivery Service listening on an ephemeral port of 127.0.0.1, spoken to over real HTTP.
public struct RunningServer: Sendable {
    public static let serviceDID = "did:web:delivery.test"

    public let baseURL: String
    public let port: Int
    public let store: any DeliveryStore
    public let group: ServiceGroup
    public let task: Task<Void, Error>
    /// Services served beside the Delivery Service (the zone service), shut down by `stop`.
    package let services: [any XRPCService]

    /// A server on `store`; `services` (built on the same store) are routed beside the Delivery Service.
    package static func start(
        store: any DeliveryStore, services: [any XRPCService] = [], configure: (inout DeliveryServerConfiguration) -> Void = { _ in }
    ) async throws -> RunningServer {
        var configuration = DeliveryServerConfiguration(serviceDID: serviceDID, host: "127.0.0.1", port: 0)
        configuration.eventHeartbeat = .seconds(1)
        // Tests play many members from one loopback address.
        configuration.connectionLimits.maxConnectionsPerAddress = 100_000
        // The full run shares two cores among every suite and stalls for seconds at a time; a
        // body is closed for a 10 s gap by default, which a loaded run can hit mid-request
        // (tests of the timeout itself set their own).
        configuration.connectionLimits.bodyIdleTimeout = .seconds(60)
        configure(&configuration)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = DeliveryServer.makeApplication(store: store, configuration: configuration, logger: testLogger, services: services) { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }
        // As `imprint-server --shutdown-grace` does: a stop waits for requests in flight at
        // most this long, then cancels them, so a test's stop never waits forever.
        var groupConfiguration = ServiceGroupConfiguration(services: [app], logger: testLogger)
        groupConfiguration.maximumGracefulShutdownDuration = Self.shutdownGrace
        let group = ServiceGroup(configuration: groupConfiguration)
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw StartError() }
        return RunningServer(baseURL: "http://127.0.0.1:\(port)", port: port, store: store, group: group, task: task, services: services)
    }

    /// A server on a fresh store of `kind`; `services` builds what is routed beside the DS on that store.
    package static func start(
        _ kind: StoreKind, services: @Sendable (any DeliveryStore) async throws -> [any XRPCService] = { _ in [] },
        configure: (inout DeliveryServerConfiguration) -> Void = { _ in }
    ) async throws -> RunningServer {
        let store = try await kind.makeStore()
        return try await start(store: store, services: try await services(store), configure: configure)
    }

    public func client(_ signer: ServiceAuthSigner = ServiceAuthSigner()) -> DeliveryClient {
        var client = DeliveryClient(baseURL: baseURL, serviceDID: Self.serviceDID, signer: signer, httpClient: TestHTTP.client)
        client.timeout = TestHTTP.requestTimeout
        return client
    }

    /// How long `stop` waits for requests in flight before cancelling them.
    static let shutdownGrace: Duration = .seconds(30)

    /// Stops accepting, drains, and closes the store. A stop that had to cancel requests says
    /// so on standard error (which request held it is then for the test to find out).
    public func stop() async throws {
        let started = ContinuousClock.now
        await group.triggerGracefulShutdown()
        try await task.value
        if ContinuousClock.now - started >= Self.shutdownGrace {
            FileHandle.standardError.write(Data("RunningServer: the stop of \(baseURL) waited \(Self.shutdownGrace) and cancelled what was in flight\n".utf8))
        }
        for service in services { try await service.shutdown() }
        try await store.shutdown()
    }

    public struct StartError: Error {}
}

/// Runs `body` against a fresh server of `kind` (with `services` beside the DS) and always stops it.
package func withServer<T>(
    _ kind: StoreKind, services: @Sendable (any DeliveryStore) async throws -> [any XRPCService] = { _ in [] },
    configure: (inout DeliveryServerConfiguration) -> Void = { _ in },
    _ body: (RunningServer) async throws -> T
) async throws -> T {
    let server = try await RunningServer.start(kind, services: services, configure: configure)
    do {
        let result = try await body(server)
        try await server.stop()
        return result
    } catch {
        try? await server.stop()
        throw error
    }
}

public enum TestHTTP {
    /// Per-request deadline of the test clients: generous, because the tests check answers,
    /// not speed, and the full run shares two cores and Swift's two cooperative threads
    /// among every suite (a request once waited over 30 s behind CPU-bound tests).
    public static let requestTimeout = TimeAmount.seconds(120)

    /// One pooled client for the whole suite, wide enough for the concurrency tests.
    ///
    /// Its idle connections are closed as Imprint's own clients close them, before the server
    /// does (`HTTPClient.Configuration.imprintPoolIdleTimeout`; a full run once failed with
    /// `remoteConnectionClosed` when they were not, in a test that polled `/metrics` for over 30 s).
    public static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: HTTPClient.Configuration.imprintPoolIdleTimeout, concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        // Generous: the concurrency tests queue hundreds of requests on a loaded 2-core machine.
        // Reads wait as long as a whole request may (`requestTimeout`): an in-process server
        // whose handlers wait for a thread of the cooperative pool, held by tests that block,
        // once sent nothing for over 60 s (`ZoneRecordTests`, PostgreSQL, a full run).
        configuration.timeout = .init(connect: .seconds(60), read: .seconds(120))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
}
