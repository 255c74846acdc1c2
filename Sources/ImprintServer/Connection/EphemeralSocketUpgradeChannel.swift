import HTTPTypes
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// The server's connections: HTTP/1.1 as `HTTP1Channel` serves it, plus the upgrade of
/// `ephemeralSocket` (v1.5) to a WebSocket.
///
/// An upgrade request is offered to `admit` (``EphemeralSocketAdmission``) before anything is
/// answered. When it admits, the connection becomes that member's socket
/// (``EphemeralSocketSession``). When it refuses, the connection answers with the contract's
/// error (the status and `{"error","message"}` body a refused `subscribeEphemeral` gets: 401,
/// 403, 404, 429...) and closes. That is why this is not hummingbird-websocket's upgrade
/// channel, which answers every refused upgrade with a bare 400. (NIO's upgrade handler
/// does not hand a refused upgrade request on to the HTTP handlers, so the router never sees
/// it.) Requests without `Upgrade` are served as `HTTP1Channel` serves them.
///
/// `connectionHandlers` are added when the connection opens (the per-address connection cap
/// counts sockets too), `http1.additionalChannelHandlers` only to connections that stay HTTP;
/// `http1.idleTimeout` bounds the wait for the first request head as well. A graceful shutdown
/// reaches a connection that has not settled its protocol yet through
/// ``QuiesceUnsettledConnection``.
struct EphemeralSocketUpgradeChannel: ServerChildChannel, HTTPChannelHandler {
    /// The socket's life once upgraded.
    typealias Session = @Sendable (NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, Logger) async -> Void

    /// An admitted socket: the handlers that go in front of its session (made and added on
    /// the event loop as the connection upgrades, e.g. ``EphemeralSendFastPath``), then the session.
    struct Admitted: Sendable {
        var handlers: @Sendable () -> [any ChannelHandler] = { [] }
        var session: Session
    }

    enum Negotiated: Sendable {
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        case refused(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, DeliveryError)
        case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, Session)
    }

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let http1: HTTP1Channel.Configuration
    let connectionHandlers: @Sendable () -> [any RemovableChannelHandler]
    /// Largest WebSocket frame read; a longer one closes the socket with 1009.
    let maxFrameSize: Int
    /// The session for an upgrade request, or the error that refuses it.
    let admit: @Sendable (HTTPRequestHead, any Channel, Logger) async -> Result<Admitted, DeliveryError>

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let quiesce = QuiesceUnsettledConnection.Signal()
            try channel.pipeline.syncOperations.addHandler(QuiesceUnsettledConnection(signal: quiesce))
            try channel.pipeline.syncOperations.addHandlers(connectionHandlers())
            let admitted = NIOLockedValueBox<Result<Admitted, DeliveryError>?>(nil)
            let upgrader = NIOTypedWebSocketServerUpgrader<Negotiated>(
                maxFrameSize: maxFrameSize,
                shouldUpgrade: { channel, head in
                    let promise = channel.eventLoop.makePromise(of: HTTPHeaders?.self)
                    promise.completeWithTask {
                        let decision = await admit(head, channel, logger)
                        admitted.withLockedValue { $0 = decision }
                        guard case .success = decision else { return nil }
                        return HTTPHeaders()
                    }
                    return promise.futureResult
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard case .success(let admitted) = admitted.withLockedValue({ $0 }) else {
                            throw NIOWebSocketUpgradeError.unsupportedWebSocketTarget
                        }
                        try channel.pipeline.syncOperations.addHandlers(admitted.handlers())
                        let session = admitted.session
                        let socket = try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        return .webSocket(socket, session)
                    }
                })
            let upgrade = NIOTypedHTTPServerUpgradeConfiguration<Negotiated>(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try pipeline.addHandlers(http1.additionalChannelHandlers())
                        try pipeline.addHandler(QuiesceUnsettledConnection.AfterFirstHead(signal: quiesce))
                        try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: http1.idleTimeout.map { Duration($0) }, logger: logger))
                        let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        if case .failure(let refusal) = admitted.withLockedValue({ $0 }) { return .refused(http, refusal) }
                        return .http(http)
                    }
                })
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<Negotiated>(upgradeConfiguration: upgrade)
            configuration.enablePipelining = false  // HTTP is pipelined by NIOAsyncChannel
            configuration.enableErrorHandling = false  // Hummingbird handles errors
            configuration.enableResponseHeaderValidation = false  // HTTPTypes validates
            configuration.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            configuration.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            configuration.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let negotiated = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            // Until a request head has decided what the connection is, the idle timeout is
            // this one (then HTTP's own, or the socket's pings): a connection that never
            // completes a head is closed.
            if let idle = http1.idleTimeout {
                let deadline = channel.eventLoop.scheduleTask(in: idle) { channel.close(promise: nil) }
                negotiated.whenComplete { _ in deadline.cancel() }
            }
            return Value(negotiated: negotiated, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .refused(let http, let refusal):
                await Self.answer(http, with: refusal)
            case .webSocket(let socket, let session):
                await session(socket, logger)
            }
        } catch {
            logger.debug("connection ended before its protocol was settled", metadata: ["error": "\(error)"])
        }
    }

    /// Answers a refused upgrade with `refusal` and closes the connection (the request that
    /// asked for the upgrade is not read further).
    static func answer(_ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, with refusal: DeliveryError) async {
        let body = refusal.responseBody
        var headers = refusal.responseHeaders
        headers[.connection] = "close"
        headers[.contentLength] = String(body.readableBytes)
        try? await http.executeThenClose { _, outbound in
            try await outbound.write(contentsOf: [.head(HTTPResponse(status: refusal.status, headerFields: headers)), .body(body), .end(nil)])
        }
    }
}
