import HTTPTypes
import Hummingbird
import ImprintDelivery
import NIOCore

/// The unauthenticated routes about the server itself: `_health`, `/metrics`, `/openapi.json`.
struct ServiceController: Sendable {
    let configuration: DeliveryServerConfiguration
    let metrics: ServerMetrics

    var routes: RouteCollection<DeliveryRequestContext> {
        let routes = RouteCollection(context: DeliveryRequestContext.self)
        routes.get(RouterPath(DeliveryPath.health), use: health)
        routes.get(RouterPath(DeliveryPath.metrics), use: metricsExposition)
        routes.get(RouterPath(DeliveryPath.openAPI), use: openAPI)
        return routes
    }

    @Sendable func health(_ request: Request, context: DeliveryRequestContext) throws -> Response {
        context.annotations.route = "_health"
        return try json(HealthStatus(status: "ok", version: configuration.version, did: configuration.serviceDID))
    }

    @Sendable func metricsExposition(_ request: Request, context: DeliveryRequestContext) -> Response {
        context.annotations.route = "metrics"
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
    }

    @Sendable func openAPI(_ request: Request, context: DeliveryRequestContext) -> Response {
        context.annotations.route = "openapi"
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: OpenAPIDocument.bytes)))
    }
}
