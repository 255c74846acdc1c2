import HTTPTypes
import Hummingbird
import Logging
import NIOHTTP1

/// Turns every error into the contract's JSON error body: a ``DeliveryError`` as it is,
/// Hummingbird's own `HTTPError`s mapped onto the contract's names (an unmatched route is
/// `NotFound`, a known path with the wrong method `MethodNotAllowed`), a body that breaks
/// HTTP framing `InvalidRequest` with `Connection: close`, anything else `InternalError`
/// without details (logged).
///
/// ``RequestLogMiddleware`` applies it outermost. A route collection whose own middleware
/// must see the rejection as a response (CORS adds its headers only to responses it gets
/// back) adds it inside that middleware; the error's name still reaches the request log
/// through ``RequestAnnotations/errorName``.
package struct ContractErrorMiddleware: RouterMiddleware {
    package typealias Context = DeliveryRequestContext

    let logger: Logger
    let knownPaths: Set<String>

    package init(logger: Logger, knownPaths: Set<String>) {
        self.logger = logger
        self.knownPaths = knownPaths
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let (name, response) = self.response(for: error, path: request.uri.path)
            context.annotations.errorName = name
            return response
        }
    }

    /// The contract's error name and response for `error`.
    func response(for error: any Error, path: String) -> (name: String, response: Response) {
        let mapped: DeliveryError
        switch error {
        case let error as DeliveryError: mapped = error
        case let error as HTTPError: mapped = map(error, path: path)
        case let error as HTTPParserError:
            // The body broke HTTP framing (a bad chunk size, a body shorter than its
            // Content-Length): the client's fault, and the connection cannot be reused.
            var response = DeliveryError.invalidRequest("the request broke HTTP framing: \(error)").makeResponse()
            response.headers[.connection] = "close"
            return ("InvalidRequest", response)
        default:
            logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            mapped = .internalError()
        }
        return (mapped.name, mapped.makeResponse())
    }

    private func map(_ error: HTTPError, path: String) -> DeliveryError {
        switch error.status {
        case .notFound:
            if knownPaths.contains(path) { return .methodNotAllowed("wrong HTTP method for \(path)") }
            return .notFound("no such method")
        case .methodNotAllowed: return .methodNotAllowed("wrong HTTP method")
        case .contentTooLarge: return .payloadTooLarge(limit: 1 << 20)
        case let status where (400..<500).contains(status.code):
            return DeliveryError(status: status, name: "InvalidRequest", message: status.reasonPhrase)
        default: return .internalError()
        }
    }
}
