import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request body stalls: once a request head has arrived, body
/// parts must follow one another within `idle` and the body must end within `deadline`
/// (``ConnectionLimits``). A closed connection ends the handler's body stream with an error,
/// which the server answers as a client error (`ContractErrorMiddleware`), never a 5xx.
final class RequestBodyTimeout: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let idle: TimeAmount
    private let deadline: TimeAmount
    private var idleTask: Scheduled<Void>?
    private var deadlineTask: Scheduled<Void>?

    init(idle: Duration, deadline: Duration) {
        self.idle = TimeAmount(idle)
        self.deadline = TimeAmount(deadline)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            cancel()
            deadlineTask = schedule(context, in: deadline)
            idleTask = schedule(context, in: idle)
        case .body:
            idleTask?.cancel()
            idleTask = schedule(context, in: idle)
        case .end:
            cancel()
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancel()
    }

    private func schedule(_ context: ChannelHandlerContext, in delay: TimeAmount) -> Scheduled<Void> {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        return context.eventLoop.scheduleTask(in: delay) {
            loopBound.value.close(promise: nil)
        }
    }

    private func cancel() {
        idleTask?.cancel()
        deadlineTask?.cancel()
        idleTask = nil
        deadlineTask = nil
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
