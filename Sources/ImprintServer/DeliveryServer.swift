import Foundation
import Hummingbird
import HummingbirdCore
import ImprintDelivery
import Logging
import NIOCore
import ServiceLifecycle

/// Assembles the server: router, middleware, the Delivery Service's controllers and store,
/// and any other `XRPCService` served beside it (the zone service).
public enum DeliveryServer {
    /// The router with every route; `routes` lists them (the OpenAPI test compares).
    public static func makeRouter(
        store: any DeliveryStore, configuration: DeliveryServerConfiguration, metrics: ServerMetrics, logger: Logger
    ) -> Router<DeliveryRequestContext> {
        makeRouter(store: store, configuration: configuration, metrics: metrics, logger: logger, services: [])
    }

    package static func makeRouter(
        store: any DeliveryStore, configuration: DeliveryServerConfiguration, metrics: ServerMetrics, logger: Logger,
        services: [any XRPCService]
    ) -> Router<DeliveryRequestContext> {
        makeRouter(store: store, configuration: configuration, metrics: metrics, logger: logger, services: services,
                   gate: makeGate(store: store, configuration: configuration))
    }

    /// The authentication gate of every route (and of the ephemeral socket's upgrade).
    static func makeGate(store: any DeliveryStore, configuration: DeliveryServerConfiguration) -> XRPCGate {
        XRPCGate(
            verifier: ServiceAuthVerifier(serviceDID: configuration.serviceDID, replayGuard: store.tokenReplayGuard),
            rateLimiter: RateLimiter(rate: configuration.rateLimitPerSecond, burst: configuration.rateLimitBurst))
    }

    static func makeRouter(
        store: any DeliveryStore, configuration: DeliveryServerConfiguration, metrics: ServerMetrics, logger: Logger,
        services: [any XRPCService], gate: XRPCGate
    ) -> Router<DeliveryRequestContext> {
        let router = Router(context: DeliveryRequestContext.self)
        let knownPaths = Set(DeliveryMethod.allCases.map(\.path) + [DeliveryPath.health, DeliveryPath.metrics, DeliveryPath.openAPI]
            + services.flatMap(\.paths))
        router.add(middleware: RequestLogMiddleware(logger: logger, metrics: metrics, knownPaths: knownPaths))
        router.addRoutes(DeliveryController(store: store, gate: gate, configuration: configuration, metrics: metrics).routes)
        for service in services {
            router.addRoutes(service.routes(gate: gate, metrics: metrics))
        }
        router.addRoutes(ServiceController(configuration: configuration, metrics: metrics).routes)
        return router
    }

    /// An application ready to run; `onServerRunning` receives the bound port (useful with port 0).
    public static func makeApplication(
        store: any DeliveryStore, configuration: DeliveryServerConfiguration, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        makeApplication(store: store, configuration: configuration, logger: logger, services: [], onServerRunning: onServerRunning)
    }

    /// `makeApplication` with other services (the zone service) routed beside the Delivery Service.
    package static func makeApplication(
        store: any DeliveryStore, configuration: DeliveryServerConfiguration, logger: Logger, services: [any XRPCService],
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let metrics = ServerMetrics()
        let gate = makeGate(store: store, configuration: configuration)
        let router = makeRouter(store: store, configuration: configuration, metrics: metrics, logger: logger, services: services, gate: gate)
        let limits = configuration.connectionLimits
        let counts = ConnectionCap.Counts()
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestBodyTimeout(idle: limits.bodyIdleTimeout, deadline: limits.bodyDeadline)],
            idleTimeout: TimeAmount(limits.idleTimeout))
        let admission = EphemeralSocketAdmission(store: store, gate: gate, metrics: metrics)
        let server = HTTPServerBuilder { responder in
            EphemeralSocketUpgradeChannel(
                responder: responder, http1: http1,
                connectionHandlers: { [ConnectionCap(counts: counts, limit: limits.maxConnectionsPerAddress)] },
                maxFrameSize: EphemeralSocketSession.maxFrameSize(maxEphemeralBytes: configuration.maxEphemeralBytes),
                admit: { head, channel, _ in
                    await admission.admit(head, channel: channel).map { admitted in
                        let session = EphemeralSocketSession(
                            store: store, rateLimiter: gate.rateLimiter, convoId: admitted.convoId, member: admitted.caller,
                            maxEphemeralBytes: configuration.maxEphemeralBytes, heartbeat: configuration.eventHeartbeat,
                            stallTimeout: configuration.ephemeralStallTimeout, metrics: metrics)
                        return EphemeralSocketUpgradeChannel.Admitted(
                            handlers: { session.channelHandlers() }, session: { socket, logger in await session.run(socket, logger: logger) })
                    }
                })
        }
        let retention = configuration.eventRetention.map { retention in
            EventRetention(store: store, retention: retention, sweep: configuration.eventRetentionSweep,
                           logger: Logger(label: "imprint.events.retention"))
        }
        return Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "imprint-server"),
            services: retention.map { [$0] } ?? [],
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
    }
}
