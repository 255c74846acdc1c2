import Foundation
import Logging
import NIOCore
import WSClient

/// A member's ephemeral socket on one convo (v1.5, `ephemeralSocket`): ephemeral messages
/// both ways over one WebSocket, authenticated once when it opened, instead of a signed POST
/// per ``send(_:)`` and an SSE stream. Open it with `DeliveryClient.openEphemeralChannel(convoId:)`.
///
/// - ``send(_:)`` relays a message exactly as `sendEphemeral` would (same checks, same relay to
///   every member's socket and SSE stream), without a response: a send the service refuses
///   closes the socket (``EphemeralChannelClosed``) instead.
/// - ``messages`` yields the other members' messages from the moment the socket opened, the
///   member's own left out; it keeps the newest ``bufferedMessages`` while nobody reads. It
///   finishes when the socket closes: without an error when the service shuts down or the
///   channel was closed here, with ``EphemeralChannelClosed`` when the service closed it for
///   a reason (`NotMember` when the member was removed or left), with the transport's error
///   when the connection broke. Nothing sent while no socket was open comes back.
/// - ``close()`` (or the end of iterating ``messages``, or the last reference going away)
///   closes the socket.
///
/// ```swift
/// if let channel = try await client.openEphemeralChannel(convoId: convo) {
///     try await channel.send(SendEphemeralInput(convoId: convo, epoch: epoch, data: sealed, kind: EphemeralKind.presence))
///     for try await message in channel.messages { print(message.sender, message.effectiveKind) }
/// }
/// ```
public final class EphemeralChannel: Sendable {
    /// Messages ``messages`` holds while its reader is busy (the service's hub holds as many).
    public static let bufferedMessages = 64
    /// Largest frame read from the service.
    static let maxFrameSize = 1 << 20

    /// The convo of every message sent and received.
    public let convoId: String
    /// The other members' messages (see the type's description for how it ends).
    public let messages: AsyncThrowingStream<EphemeralMessage, any Error>

    private let outbound: WebSocketOutboundWriter
    private let connection: Task<Void, Never>

    private init(convoId: String, messages: AsyncThrowingStream<EphemeralMessage, any Error>, outbound: WebSocketOutboundWriter,
                 connection: Task<Void, Never>) {
        self.convoId = convoId
        self.messages = messages
        self.outbound = outbound
        self.connection = connection
    }

    deinit { connection.cancel() }

    /// Relays `input` to the members of ``convoId`` connected now. Throws without sending
    /// when `input` is for another convo or breaks `sendEphemeral`'s form (empty data, a
    /// malformed kind, a negative epoch), and when the socket is closed.
    public func send(_ input: SendEphemeralInput) async throws {
        guard input.convoId == convoId else { throw EphemeralFrameError("the channel is for convo \(convoId), not \(input.convoId)") }
        guard input.epoch >= 0, !input.data.isEmpty, input.kind.map(EphemeralKind.isValid) ?? true else {
            throw EphemeralFrameError("epoch must not be negative, data not empty, kind of the form [a-z0-9-]{1,32}")
        }
        try await outbound.write(.binary(EphemeralSocketFrame.encodeSend(input)))
    }

    /// Closes the socket; ``messages`` then finishes.
    public func close() { connection.cancel() }

    /// Connects to `url` with `authorization` and waits for the upgrade. Throws the
    /// transport's error (`WebSocketClientError.webSocketUpgradeFailed` when refused).
    static func open(url: String, authorization: String, convoId: String) async throws -> EphemeralChannel {
        var configuration = WebSocketClientConfiguration(maxFrameSize: maxFrameSize)
        configuration.additionalHeaders[.authorization] = authorization
        let (messages, sink) = AsyncThrowingStream.makeStream(of: EphemeralMessage.self, bufferingPolicy: .bufferingNewest(bufferedMessages))
        let (opened, opener) = AsyncThrowingStream.makeStream(of: WebSocketOutboundWriter.self)
        let connection = Task {
            do {
                let close = try await WebSocketClient.connect(url: url, configuration: configuration, logger: Self.logger) { inbound, outbound, _ in
                    opener.yield(outbound)
                    opener.finish()
                    for try await message in inbound.messages(maxSize: maxFrameSize) {
                        guard case .binary(let buffer) = message else { continue }
                        sink.yield(try EphemeralSocketFrame.decodeMessage(buffer, convoId: convoId))
                    }
                }
                opener.finish(throwing: EphemeralChannelClosed(code: 1006, reason: "closed before the upgrade"))
                if let close, let closed = EphemeralChannelClosed(close) {
                    sink.finish(throwing: closed)
                } else {
                    sink.finish()
                }
            } catch {
                opener.finish(throwing: error)
                sink.finish(throwing: error)
            }
        }
        sink.onTermination = { _ in connection.cancel() }
        do {
            var iterator = opened.makeAsyncIterator()
            guard let outbound = try await iterator.next() else { throw CancellationError() }
            return EphemeralChannel(convoId: convoId, messages: messages, outbound: outbound, connection: connection)
        } catch {
            connection.cancel()
            throw error
        }
    }

    private static let logger = Logger(label: "imprint.delivery.ephemeral-channel", factory: { _ in SwiftLogNoOpLogHandler() })
}
