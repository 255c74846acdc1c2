import ImprintDelivery
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket
import ServiceLifecycle
@_spi(WSInternal) import WSCore

/// One member's ephemeral socket (v1.5, `ephemeralSocket`), from its upgrade to its close.
///
/// Guarantees:
/// - **Same relay as `sendEphemeral`.** Each binary message from the member is a send
///   (``EphemeralSocketFrame``), checked with `sendEphemeral`'s rules (``InputRules/ephemeral(_:maxBytes:)``)
///   and handed to `relayEphemeral`: the same hub, and on PostgreSQL the same `NOTIFY`, so
///   members on every instance, with a socket or an SSE stream, get it. Where the store
///   relays in-process, the ``EphemeralSendFastPath`` in front of the session does this on the
///   event loop for well-formed single-frame sends, and the session sees only the rest.
/// - **Same messages as `subscribeEphemeral`.** The convo's ephemeral messages from the moment
///   of the upgrade, the member's own left out, go out as binary frames. The hub hands each
///   one to the socket's event loop as it is published (a direct subscription: no task
///   between the sender's socket and the receiver's); a member who reads so slowly that the
///   socket's send buffer is full (its high-water mark, 64 KiB by default) loses the messages
///   published until it drains, so one slow reader never makes the server hold more. Each
///   one lost is counted (`imprint_ephemeral_dropped_total{subscriber="socket"}`). A socket
///   still full `ephemeralStallTimeout` after its first loss (60 s by default) when another
///   message comes is dropped: its member has stopped reading.
/// - **Membership, at its change.** The upgrade admitted an active member
///   (``EphemeralSocketAdmission``); the membership is checked again as soon as an event for
///   the member commits (its removal or departure is one) and at every `eventHeartbeat`
///   (``MembershipWatch``), and the socket of a member who was removed or left is closed with
///   ``notMemberCode`` and the reason `NotMember`. Between the removal's commit and that check
///   (one store read) a removed member's sends may still be relayed: they carry only MLS
///   ciphertext of an epoch the others have left, which they drop.
/// - **Bounded.** Frames longer than `maxFrameSize` close the socket with 1009; a text frame
///   closes it with 1003; a binary message that is not a well-formed send, or breaks
///   `sendEphemeral`'s rules, closes it with 1008 and the reason `InvalidRequest: <why>`. Sends
///   beyond the member's rate limit are dropped (an ephemeral message may always be lost) and
///   counted in the rejections metric as `RateLimited`.
///   None of these affects another socket or the server.
/// - **Shutdown.** A graceful shutdown closes the socket as it begins (1001, going away).
///   Every close the server starts drops the connection if the handshake has not ended
///   within ``closeHandshakeTimeout`` (the member stopped reading), so no client can hold up
///   the shutdown.
struct EphemeralSocketSession: Sendable {
    /// Close code of a member who was removed or left (an application code, 4000-4999).
    static let notMemberCode = WebSocketErrorCode.unknown(4403)
    /// The shortest period of the socket's pings. A ping not answered by the next one closes
    /// the socket, so a period as short as a test's 1 s heartbeat closes live sockets whenever
    /// a loaded machine stalls a client for a second; membership is still checked at every
    /// heartbeat.
    static let minimumPingPeriod: Duration = .seconds(10)

    let store: any DeliveryStore
    let rateLimiter: RateLimiter
    let convoId: String
    let member: String
    let maxEphemeralBytes: Int
    let heartbeat: Duration
    /// How long the socket's send buffer may stay full while messages come for it.
    let stallTimeout: Duration
    let metrics: ServerMetrics

    /// Largest frame the server reads: a send of `maxEphemeralBytes` with its largest header.
    static func maxFrameSize(maxEphemeralBytes: Int) -> Int { maxEphemeralBytes + EphemeralSocketFrame.maxSendHeaderBytes }

    /// The handlers in front of the session, on the event loop: the fast path for sends
    /// where the store relays in-process.
    func channelHandlers() -> [any ChannelHandler] {
        store.relaysEphemeralInProcess ? [EphemeralSendFastPath(session: self)] : []
    }

    /// The message a send frame of the member's relays, checked as `sendEphemeral` checks a
    /// POST; nil when it is past the member's rate limit: dropped (an ephemeral message may
    /// always be lost) and counted as the 429 a POST would have been answered with. Throws
    /// when the frame is not a well-formed send or breaks `sendEphemeral`'s rules.
    func admit(_ frame: ByteBuffer) throws -> EphemeralMessage? {
        let input = try EphemeralSocketFrame.decodeSend(frame, convoId: convoId)
        try InputRules.ephemeral(input, maxBytes: maxEphemeralBytes)
        guard rateLimiter.admit(member) else {
            metrics.recordRejection(DeliveryError.rateLimited().name)
            return nil
        }
        return EphemeralMessage(convoId: convoId, sender: member, epoch: input.epoch, data: input.data, kind: input.kind)
    }

    func run(_ socket: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, logger: Logger) async {
        let configuration = WebSocketHandler.Configuration(
            extensions: [], autoPing: .enabled(timePeriod: max(heartbeat, Self.minimumPingPeriod)), validateUTF8: false,
            maxFrameSize: Self.maxFrameSize(maxEphemeralBytes: maxEphemeralBytes))
        do {
            _ = try await WebSocketHandler.handle(
                type: .server, configuration: configuration, asyncChannel: socket, context: Context(logger: logger),
                handler: { inbound, outbound, _ in try await self.serve(inbound: inbound, outbound: outbound, channel: socket.channel) })
        } catch {
            logger.debug("ephemeral socket ended", metadata: ["error": "\(error)"])
        }
    }

    private struct Context: WebSocketContext {
        let logger: Logger
    }

    private func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel) async throws {
        let hub = store.ephemeralHub
        let (shutdown, shutdownSignal) = AsyncStream.makeStream(of: Void.self)
        let stalledSince = NIOLockedValueBox<NIODeadline?>(nil)
        let stallTimeout = TimeAmount(stallTimeout)
        let subscription = hub.subscribe(convoId: convoId, deliver: { [member, metrics] message in
            guard message.sender != member else { return }
            guard channel.isWritable else {
                metrics.recordEphemeralDropped(subscriber: "socket")
                let now = NIODeadline.now()
                let since = stalledSince.withLockedValue { since in
                    if since == nil { since = now }
                    return since!
                }
                if now - since >= stallTimeout { channel.close(promise: nil) }
                return
            }
            stalledSince.withLockedValue { $0 = nil }
            let frame = WebSocketFrame(fin: true, opcode: .binary, data: EphemeralSocketFrame.encodeMessage(message, allocator: channel.allocator))
            channel.writeAndFlush(frame, promise: nil)
        }, finish: { shutdownSignal.finish() })
        metrics.subscribers.increment()
        defer {
            hub.unsubscribe(subscription)
            metrics.subscribers.decrement()
        }
        // The server's graceful shutdown waits for its connections: this one closes as it
        // begins, without waiting for the hub to close (the store shuts down after them).
        try await withGracefulShutdownHandler {
            try await serve(inbound: inbound, outbound: outbound, channel: channel, shutdown: shutdown)
        } onGracefulShutdown: {
            shutdownSignal.finish()
        }
    }

    private func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel,
                       shutdown: AsyncStream<Void>) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in shutdown {}
                // The server is shutting down (or the hub closed its subscriptions), or this
                // socket's serving ended and the group is being cancelled.
                if !Task.isCancelled { try await Self.close(outbound, .goingAway, "shutting down", channel: channel) }
            }
            group.addTask { [store, convoId, member, heartbeat] in
                for await _ in MembershipWatch.checks(bell: store.eventBell, member: member, heartbeat: heartbeat) {
                    // Only a definite "no" closes the socket: a store that fails to answer
                    // (a busy pool) is asked again at the next check.
                    guard (try? await store.isActiveMember(convoId: convoId, did: member)) != false else {
                        try await Self.close(outbound, Self.notMemberCode, "NotMember: no longer an active member of the convo", channel: channel)
                        return
                    }
                }
            }
            defer { group.cancelAll() }
            for try await message in inbound.messages(maxSize: Self.maxFrameSize(maxEphemeralBytes: maxEphemeralBytes)) {
                guard case .binary(let buffer) = message else {
                    try await Self.close(outbound, .unacceptableData, "InvalidRequest: ephemeral sends are binary frames", channel: channel)
                    return
                }
                let admitted: EphemeralMessage?
                do {
                    admitted = try admit(buffer)
                } catch {
                    try await Self.close(outbound, .policyViolation, "InvalidRequest: \(Self.reason(error))", channel: channel)
                    return
                }
                if let admitted { try await store.relayEphemeral(admitted) }
            }
        }
    }

    /// How long a close that the server starts may take, its close frame sent and the
    /// member's answered: past it the connection is dropped. A member who stopped reading
    /// never takes the frame nor answers it, and a graceful shutdown would otherwise wait for
    /// its connection for ever.
    static let closeHandshakeTimeout = TimeAmount.seconds(5)

    /// Sends a close frame, and drops the connection if it is still open
    /// ``closeHandshakeTimeout`` later; a reason is cut to the 123 bytes a close frame holds.
    private static func close(_ outbound: WebSocketOutboundWriter, _ code: WebSocketErrorCode, _ reason: String,
                              channel: any Channel) async throws {
        var cut = Substring(reason)
        while cut.utf8.count > 123 { cut = cut.dropLast() }
        channel.eventLoop.scheduleTask(in: closeHandshakeTimeout) { channel.close(promise: nil) }
        try await outbound.close(code, reason: String(cut))
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case let error as DeliveryError: error.message
        case let error as EphemeralFrameError: error.reason
        default: "\(error)"
        }
    }
}
