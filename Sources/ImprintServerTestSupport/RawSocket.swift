import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ImprintEncoding

/// A TCP client below HTTP, for what an HTTP client library will not send: broken framing,
/// half-sent heads, stalled bodies, many idle connections. Non-blocking (NIO), so tests
/// never hold a cooperative thread.
public final class RawSocket: Sendable {
    /// What came back on a connection until the server closed it or `timeout` passed.
    public struct Outcome: Sendable {
        public var bytes: [UInt8]
        /// The server closed the connection (as opposed to our timeout).
        public var closedByServer: Bool
        public var seconds: Double
        public var statusLine: String { String(decoding: bytes.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self) }
    }

    private final class Collector: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        var bytes: [UInt8] = []
        let closed: EventLoopPromise<Void>
        init(closed: EventLoopPromise<Void>) { self.closed = closed }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            bytes += Array(buffer: unwrapInboundIn(data))
        }
        func channelInactive(context: ChannelHandlerContext) { closed.succeed(()) }
        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event { closed.succeed(()) }
            context.fireUserInboundEventTriggered(event)
        }
        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
    }

    private let channel: any Channel
    private let collector: Collector
    private let started = ContinuousClock.now

    private init(channel: any Channel, collector: Collector) {
        self.channel = channel
        self.collector = collector
    }

    /// Connects to `host:port`. `reading: false` plays a client that stopped reading: the
    /// socket reads nothing and has a small receive buffer, so what the server writes piles up
    /// in its own send buffer (and a close by the server goes unseen here).
    public static func connect(host: String = "127.0.0.1", port: Int, reading: Bool = true) async throws -> RawSocket {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let closed = loop.makePromise(of: Void.self)
        let collector = Collector(closed: closed)
        var bootstrap = ClientBootstrap(group: loop)
            .channelInitializer { channel in channel.pipeline.addHandler(collector) }
        if !reading {
            bootstrap = bootstrap.channelOption(.autoRead, value: false).channelOption(.socketOption(.so_rcvbuf), value: 4096)
        }
        let channel = try await bootstrap.connect(host: host, port: port).get()
        return RawSocket(channel: channel, collector: collector)
    }

    /// Sends `bytes` as they are.
    public func send(_ bytes: some Sequence<UInt8>) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: Array(bytes)))
    }

    public func send(_ text: String) async throws { try await send(Array(text.utf8)) }

    /// Closes our sending side (the server sees the request end early).
    public func finishSending() async throws {
        try await channel.close(mode: .output)
    }

    /// Waits until the server closes the connection or `timeout` passes (then closes it).
    public func outcome(timeout: Duration) async -> Outcome {
        let timedOut = NIOLockedValueBox(false)
        let channel = self.channel
        let timer = channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            timedOut.withLockedValue { $0 = true }
            channel.close(promise: nil)
        }
        try? await collector.closed.futureResult.get()
        timer.cancel()
        let elapsed = ContinuousClock.now - started
        let bytes = try? await channel.eventLoop.submit { [collector] in collector.bytes }.get()
        try? await channel.close()
        return Outcome(bytes: bytes ?? [], closedByServer: !timedOut.withLockedValue { $0 },
                       seconds: elapsed.inSeconds)
    }

    /// Waits until at least `count` bytes have come back (true) or `timeout` passed or the
    /// server closed the connection first (false); the connection stays open.
    public func waitUntilReceived(atLeast count: Int, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let received = (try? await channel.eventLoop.submit { [collector] in collector.bytes.count }.get()) ?? 0
            if received >= count { return true }
            if !channel.isActive { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// Whether the server has closed the connection already.
    public var isOpen: Bool { channel.isActive }
}
