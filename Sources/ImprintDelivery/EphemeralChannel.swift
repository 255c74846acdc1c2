import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// A member's ephemeral socket on one convo (v1.5, `ephemeralSocket`): ephemeral messages
/// both ways over one WebSocket, authenticated once when it opened, instead of a signed POST
/// per ``send(_:)`` and an SSE stream. Open it with `DeliveryClient.openEphemeralChannel(convoId:)`.
///
/// - ``send(_:)`` (and ``sendNow(_:)``, which does not suspend) relays a message exactly as
///   `sendEphemeral` would (same checks, same relay to every member's socket and SSE stream),
///   without a response: a send the service refuses closes the socket
///   (``EphemeralChannelClosed``) instead.
/// - ``messages`` yields the other members' messages from the moment the socket opened, the
///   member's own left out; it keeps the newest ``bufferedMessages`` while nobody reads. It
///   finishes when the socket closes: without an error when the service shuts down or the
///   channel was closed here, with ``EphemeralChannelClosed`` when the service closed it for
///   a reason (`NotMember` when the member was removed or left), with the transport's error
///   when the connection broke. Nothing sent while no socket was open comes back.
/// - ``close()`` (or the end of iterating ``messages``, or the last reference going away)
///   closes the socket.
///
/// The socket is driven by SwiftNIO directly: a frame that arrives is decoded on the
/// connection's event loop and handed to ``messages`` there, and ``sendNow(_:)`` hands its
/// frame to the event loop from whatever thread calls it. No task sits between the socket and
/// either side, so a message costs no hop through Swift's cooperative pool (which a busy
/// process may have filled with its own work) on the way in or out.
///
/// ```swift
/// if let channel = try await client.openEphemeralChannel(convoId: convo) {
///     try channel.sendNow(SendEphemeralInput(convoId: convo, epoch: epoch, data: sealed, kind: EphemeralKind.presence))
///     for try await message in channel.messages { print(message.sender, message.effectiveKind) }
/// }
/// ```
public final class EphemeralChannel: Sendable {
    /// Messages ``messages`` holds while its reader is busy; older ones are dropped first.
    public static let bufferedMessages = 64
    /// Largest message read from the service.
    static let maxFrameSize = 1 << 20
    /// How long a connected service may take to answer the upgrade.
    static let upgradeTimeout = TimeAmount.seconds(30)

    /// The convo of every message sent and received.
    public let convoId: String
    /// The other members' messages (see the type's description for how it ends).
    public let messages: AsyncThrowingStream<EphemeralMessage, any Error>

    private let channel: any Channel
    private let handler: NIOLoopBound<EphemeralChannelHandler>

    private init(convoId: String, messages: AsyncThrowingStream<EphemeralMessage, any Error>, channel: any Channel,
                 handler: NIOLoopBound<EphemeralChannelHandler>) {
        self.convoId = convoId
        self.messages = messages
        self.channel = channel
        self.handler = handler
    }

    deinit { close() }

    /// Relays `input` to the members of ``convoId`` connected now (``sendNow(_:)``).
    public func send(_ input: SendEphemeralInput) async throws {
        try sendNow(input)
    }

    /// Hands `input`'s frame to the socket without waiting for it to be written: safe to call
    /// from any thread or actor, and it never suspends. Throws without sending when `input`
    /// is for another convo or breaks `sendEphemeral`'s form (empty data, a malformed kind, a
    /// negative epoch), when the socket is closed, and when the frames already handed to it
    /// have not left yet (the service reads slowly: the socket's send buffer is full), so a
    /// slow service never makes a sender hold unbounded memory.
    public func sendNow(_ input: SendEphemeralInput) throws {
        guard input.convoId == convoId else { throw EphemeralFrameError("the channel is for convo \(convoId), not \(input.convoId)") }
        guard input.epoch >= 0, !input.data.isEmpty, input.kind.map(EphemeralKind.isValid) ?? true else {
            throw EphemeralFrameError("epoch must not be negative, data not empty, kind of the form [a-z0-9-]{1,32}")
        }
        guard channel.isActive else { throw EphemeralChannelClosed(code: 1006, reason: "the socket is closed") }
        guard channel.isWritable else { throw EphemeralFrameError("the socket's send buffer is full") }
        let frame = WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(),
                                   data: EphemeralSocketFrame.encodeSend(input, allocator: channel.allocator))
        channel.writeAndFlush(frame, promise: nil)
    }

    /// Closes the socket (a close frame, then the connection); ``messages`` then finishes
    /// without an error.
    public func close() { Self.close(handler) }

    /// Closes the socket of `handler` from any thread (on its event loop).
    private static func close(_ handler: NIOLoopBound<EphemeralChannelHandler>) {
        handler.eventLoop.execute { handler.value.closeHere() }
    }

    /// Connects to `url` (`http`, `https`, `ws` or `wss`) with `authorization` and waits for
    /// the upgrade. Throws ``EphemeralUpgradeRefused`` when the service answers the upgrade
    /// with anything but 101, or the transport's error.
    static func open(url: String, authorization: String, convoId: String) async throws -> EphemeralChannel {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host, !host.isEmpty else {
            throw EphemeralFrameError("not a URL: \(url)")
        }
        let secure: Bool
        switch scheme {
        case "http", "ws": secure = false
        case "https", "wss": secure = true
        default: throw EphemeralFrameError("not an http(s) or ws(s) URL: \(url)")
        }
        let port = parsed.port ?? (secure ? 443 : 80)
        var target = parsed.path.isEmpty ? "/" : parsed.path
        if let query = parsed.query { target += "?" + query }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: parsed.port.map { "\(host):\($0)" } ?? host)
        headers.add(name: "Authorization", value: authorization)
        headers.add(name: "Content-Length", value: "0")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)
        let tls = secure ? try Self.tlsContext() : nil

        let (messages, sink) = AsyncThrowingStream.makeStream(of: EphemeralMessage.self, bufferingPolicy: .bufferingNewest(bufferedMessages))
        let upgraded: EventLoopFuture<UpgradeResult> = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: host))
                    }
                    let upgrader = NIOTypedWebSocketClientUpgrader<UpgradeResult>(maxFrameSize: maxFrameSize) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            let handler = EphemeralChannelHandler(convoId: convoId, sink: sink)
                            try channel.pipeline.syncOperations.addHandler(NIOWebSocketFrameAggregator(
                                minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1024, maxAccumulatedFrameSize: maxFrameSize))
                            try channel.pipeline.syncOperations.addHandler(handler)
                            return .upgraded(channel, NIOLoopBound(handler, eventLoop: channel.eventLoop))
                        }
                    }
                    var configuration = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: head, upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            channel.close(promise: nil)
                            return channel.eventLoop.makeSucceededFuture(.refused)
                        }))
                    configuration.leftOverBytesStrategy = .forwardBytes
                    let upgraded = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: configuration)
                    // A service that accepts the connection but never answers the upgrade
                    // does not hold the caller for ever (`live` then reconnects).
                    let deadline = channel.eventLoop.scheduleTask(in: upgradeTimeout) { channel.close(promise: nil) }
                    upgraded.whenComplete { _ in deadline.cancel() }
                    return upgraded
                }
            }
        switch try await upgraded.get() {
        case .upgraded(let channel, let handler):
            sink.onTermination = { _ in close(handler) }
            return EphemeralChannel(convoId: convoId, messages: messages, channel: channel, handler: handler)
        case .refused:
            sink.finish()
            throw EphemeralUpgradeRefused()
        }
    }

    private enum UpgradeResult: Sendable {
        case upgraded(any Channel, NIOLoopBound<EphemeralChannelHandler>)
        case refused
    }

    /// One TLS context for every secure socket of the process (the system's trust roots).
    private static func tlsContext() throws -> NIOSSLContext {
        try tlsContextResult.get()
    }

    private static let tlsContextResult = Result { try NIOSSLContext(configuration: .makeClientConfiguration()) }
}

/// The service answered an ephemeral socket's upgrade with something other than 101 (it
/// refused the member, or does not know the method): ask it again as plain HTTP to learn why.
struct EphemeralUpgradeRefused: Error {}
