import Foundation
import HTTPTypes
import Hummingbird
import ImprintDelivery
import NIOCore

/// A rule violation or bad input, rendered as `{"error", "message"}` with its status.
/// Everything the API rejects is one of these; nothing else reaches a client as a 4xx.
public struct DeliveryError: Error, HTTPResponseError, Sendable, Equatable, CustomStringConvertible {
    public let status: HTTPResponse.Status
    public let name: String
    public let message: String
    public let currentEpoch: Int?

    public init(status: HTTPResponse.Status, name: String, message: String, currentEpoch: Int? = nil) {
        self.status = status
        self.name = name
        self.message = message
        self.currentEpoch = currentEpoch
    }

    public var body: XRPCErrorBody { XRPCErrorBody(error: name, message: message, currentEpoch: currentEpoch) }

    public var description: String { "\(status.code) \(name): \(message)" }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        makeResponse()
    }

    package func makeResponse() -> Response {
        Response(status: status, headers: responseHeaders, body: .init(byteBuffer: responseBody))
    }

    /// The JSON body of the response.
    package var responseBody: ByteBuffer {
        ByteBuffer(data: (try? WireJSON.encoder().encode(body)) ?? Data("{\"error\":\"InternalError\",\"message\":\"\"}".utf8))
    }

    /// The headers of the response (its body's type, and `Retry-After` on 429).
    package var responseHeaders: HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if status == .tooManyRequests { headers[.retryAfter] = "1" }
        return headers
    }

    // MARK: The contract's errors

    public static func invalidRequest(_ message: String) -> Self {
        .init(status: .badRequest, name: "InvalidRequest", message: message)
    }
    public static func authRequired(_ message: String = "authorization required") -> Self {
        .init(status: .unauthorized, name: "AuthRequired", message: message)
    }
    public static func invalidToken(_ message: String) -> Self {
        .init(status: .unauthorized, name: "InvalidToken", message: message)
    }
    /// A token whose `(iss, jti)` was accepted before, by this or another instance.
    public static func tokenReplayed() -> Self { invalidToken("token replayed") }
    public static func notMember(_ convoId: String) -> Self {
        .init(status: .forbidden, name: "NotMember", message: "caller is not a member of convo \(convoId)")
    }
    public static func forbidden(_ message: String) -> Self {
        .init(status: .forbidden, name: "Forbidden", message: message)
    }
    public static func notFound(_ message: String) -> Self {
        .init(status: .notFound, name: "NotFound", message: message)
    }
    public static func convoNotFound(_ convoId: String) -> Self {
        notFound("no convo \(convoId)")
    }
    public static func noWelcome(_ convoId: String) -> Self {
        .init(status: .notFound, name: "NoWelcome", message: "no welcome waiting in convo \(convoId)")
    }
    public static func methodNotAllowed(_ message: String) -> Self {
        .init(status: .methodNotAllowed, name: "MethodNotAllowed", message: message)
    }
    public static func epochMismatch(current: Int) -> Self {
        .init(status: .conflict, name: "EpochMismatch", message: "epoch is \(current)", currentEpoch: current)
    }
    public static func convoExists(_ convoId: String) -> Self {
        .init(status: .conflict, name: "ConvoExists", message: "convo \(convoId) already exists")
    }
    /// v1.1: a `sendMessage` retry whose `clientMessageId` names a stored message with other
    /// hash, size or type.
    public static func clientMessageIdReused(_ id: String) -> Self {
        .init(status: .conflict, name: "ClientMessageIdReused", message: "clientMessageId \(id) was used for another message")
    }
    public static func payloadTooLarge(limit: Int) -> Self {
        .init(status: .contentTooLarge, name: "PayloadTooLarge", message: "body exceeds \(limit) bytes")
    }
    public static func unsupportedMediaType(_ contentType: String?) -> Self {
        .init(status: .unsupportedMediaType, name: "UnsupportedMediaType",
              message: "this method takes application/json, not \(contentType.map { QueryParameters.printable($0) } ?? "a body without Content-Type")")
    }
    public static func rateLimited() -> Self {
        .init(status: .tooManyRequests, name: "RateLimited", message: "rate limit exceeded")
    }
    public static func tooManyKeyPackages(limit: Int) -> Self {
        .init(status: .tooManyRequests, name: "TooManyKeyPackages", message: "at most \(limit) unconsumed key packages")
    }
    public static func internalError() -> Self {
        .init(status: .internalServerError, name: "InternalError", message: "internal server error")
    }
}
