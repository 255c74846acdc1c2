import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ImprintEncoding

/// Outermost middleware: turns every error into the contract's JSON error body (so unmatched
/// routes are `NotFound` and unexpected faults are `InternalError` without details), then
/// writes one structured log line and the request metrics.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = DeliveryRequestContext

    let logger: Logger
    let metrics: ServerMetrics
    let knownPaths: Set<String>

    var errors: ContractErrorMiddleware { ContractErrorMiddleware(logger: logger, knownPaths: knownPaths) }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response: Response
        var errorName: String?
        do {
            response = try await next(request, context)
            errorName = context.annotations.errorName
        } catch {
            (errorName, response) = errors.response(for: error, path: request.uri.path)
        }
        let duration = ContinuousClock.now - start
        let route = context.annotations.route ?? "unmatched"
        metrics.recordRequest(route: route, status: Int(response.status.code), duration: duration,
                              bodyBytes: request.headers[.contentLength].flatMap { Int($0) })
        if let errorName { metrics.recordRejection(errorName) }
        // The metadata is an autoclosure argument: built only when info lines are logged.
        logger.info(
            "request",
            metadata: Self.metadata(
                request: request, route: route, status: response.status.code, duration: duration,
                caller: context.annotations.caller, errorName: errorName))
        return response
    }

    static func metadata(
        request: Request, route: String, status: Int, duration: Duration, caller: String?, errorName: String?
    ) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "method": "\(request.method.rawValue)",
            "route": "\(route)",
            "status": "\(status)",
            "ms": "\(String(format: "%.3f", duration.inMilliseconds))",
        ]
        if let caller { metadata["did"] = "\(caller)" }
        if let errorName { metadata["error"] = "\(errorName)" }
        return metadata
    }

}
