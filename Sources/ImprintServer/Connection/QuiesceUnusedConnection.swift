import NIOCore

/// Closes a connection that has not sent a byte when the server shuts down gracefully.
///
/// A graceful shutdown (`ServiceGroup.triggerGracefulShutdown`, SIGTERM for `imprint-server`)
/// stops accepting and then waits for every open connection. Once a request head has decided
/// what a connection is, its own handlers take the shutdown: HTTP closes when no request is in
/// progress (after the response of one that is), a member's socket closes as its session ends.
/// Before that, nothing did: a connection that was opened and never used (HTTP clients open
/// such connections ahead of need and pool them) held the shutdown until the client gave it
/// up or the server's idle timeout closed it, 20 to 30 s with Imprint's own clients.
///
/// This handler sits first in each connection's pipeline. It notes whether the client has
/// sent anything; on `ChannelShouldQuiesceEvent` it closes the connection if not, and otherwise
/// passes the event on to the handlers that own the connection by then. (A connection whose
/// first request head is still being read when the shutdown begins gets its answer; its HTTP
/// handlers, added after the event, then keep it until the idle timeout.)
final class QuiesceUnusedConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private var used = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        used = true
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !used {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
