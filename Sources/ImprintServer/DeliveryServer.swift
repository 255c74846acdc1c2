import Foundation
import Hummingbird
import ImprintDelivery
import Logging
import NIOCore
import ServiceLifecycle

/// Assembles the Delivery Service: router, middleware, handlers and store.
public enum DeliveryServer {
    /// The router with every route; `routes` lists them (the OpenAPI test compares).
    public static func makeRouter(
        store: any DeliveryStore, configuration: DeliveryServerConfiguration, metrics: ServerMetrics, logger: Logger
    ) -> Router<DeliveryRequestContext> {
        let router = Router(context: DeliveryRequestContext.self)
        let knownPaths = Set(DeliveryMethod.allCases.map(\.path) + [DeliveryPath.health, DeliveryPath.metrics, DeliveryPath.openAPI])
        router.add(middleware: RequestLogMiddleware(logger: logger, metrics: metrics, knownPaths: knownPaths))
        let api = DeliveryAPI(
            store: store, verifier: ServiceAuthVerifier(serviceDID: configuration.serviceDID, replayGuard: store.tokenReplayGuard),
            rateLimiter: RateLimiter(rate: configuration.rateLimitPerSecond, burst: configuration.rateLimitBurst),
            configuration: configuration, metrics: metrics)
        api.register(on: router)
        router.get(RouterPath(DeliveryPath.metrics)) { _, context in
            context.annotations.route = "metrics"
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
        router.get(RouterPath(DeliveryPath.openAPI)) { _, context in
            context.annotations.route = "openapi"
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: OpenAPIDocument.bytes)))
        }
        return router
    }

    /// An application ready to run; `onServerRunning` receives the bound port (useful with port 0).
    public static func makeApplication(
        store: any DeliveryStore, configuration: DeliveryServerConfiguration, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = makeRouter(store: store, configuration: configuration, metrics: ServerMetrics(), logger: logger)
        return Application(
            router: router,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "imprint-server"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
    }
}
