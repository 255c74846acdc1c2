import NIOConcurrencyHelpers
import NIOCore

/// Makes a graceful shutdown reach a connection whatever it was doing when the shutdown began.
///
/// A graceful shutdown (`ServiceGroup.triggerGracefulShutdown`, SIGTERM for `imprint-server`)
/// stops accepting, sends `ChannelShouldQuiesceEvent` down every open connection and waits for
/// them all to close. Once a request head has decided what a connection is, its own handlers
/// take the event: HTTP (`HTTPConnectionStateHandler`) closes when no request is in progress,
/// or after the response of the one that is; a member's socket closes as its session ends.
/// Before that, the connection's pipeline is NIO's upgrade handler, which ignores the event:
///
/// - A connection that has sent nothing (HTTP clients open such connections ahead of need and
///   pool them) held the shutdown until the client gave it up or the server's idle timeout
///   closed it: 20 to 30 s with Imprint's own clients. It is closed at once.
/// - A connection whose first request head was still arriving got its HTTP handlers after the
///   event had passed, so it stayed open after its answer, and a client that kept using it
///   (polling faster than the idle timeout) kept the server from ever stopping. The event is
///   given again to its HTTP handlers when that first head reaches them
///   (``QuiesceUnsettledConnection/AfterFirstHead``): the answer goes out, then the connection closes.
///
/// One ``Signal`` per connection is shared by the two handlers: ``QuiesceUnsettledConnection``,
/// first in the pipeline (it sees the bytes), and ``AfterFirstHead``, just before
/// `HTTPConnectionStateHandler` in a connection that stays HTTP.
final class QuiesceUnsettledConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// Whether the shutdown began once the connection had sent something (its HTTP handlers,
    /// if any, may not have been there to take it).
    final class Signal: Sendable {
        private let missed = NIOLockedValueBox(false)
        init() {}
        var quiescedBeforeHead: Bool { missed.withLockedValue { $0 } }
        fileprivate func noteMissed() { missed.withLockedValue { $0 = true } }
    }

    private let signal: Signal
    private var used = false

    /// `signal` is shared with the connection's ``AfterFirstHead``.
    init(signal: Signal) {
        self.signal = signal
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        used = true
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            guard used else {
                context.close(promise: nil)
                return
            }
            signal.noteMissed()
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Gives the shutdown that the connection's HTTP handlers missed to them, right after its
    /// first request head has reached them (so they count the request in progress and close
    /// after answering it).
    final class AfterFirstHead: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny

        private let signal: Signal
        private var seenHead = false

        init(signal: Signal) {
            self.signal = signal
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.fireChannelRead(data)
            guard !seenHead else { return }
            seenHead = true
            if signal.quiescedBeforeHead { context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
        }
    }
}
