import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request body stalls: once a request head has arrived, the body
/// must keep coming while the server is reading it (no gap longer than `idle` between a read
/// the server asked for and the next body part) and must end within `deadline`
/// (``ConnectionLimits``). The idle clock runs only while the server wants data: a handler
/// that has not started reading yet (backpressure) is the server's delay, not the client's.
/// A closed connection ends the handler's body stream with an error, which the server
/// answers as a client error (`ContractErrorMiddleware`), never a 5xx.
final class RequestBodyTimeout: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let idle: TimeAmount
    private let deadline: TimeAmount
    private var inBody = false
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
            inBody = true
            deadlineTask = schedule(context, in: deadline)
        case .body:
            idleTask?.cancel()
            idleTask = nil
        case .end:
            cancel()
        }
        context.fireChannelRead(data)
    }

    /// The server asks for more bytes: from now the client has `idle` to send some.
    func read(context: ChannelHandlerContext) {
        if inBody, idleTask == nil { idleTask = schedule(context, in: idle) }
        context.read()
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
        inBody = false
        idleTask?.cancel()
        deadlineTask?.cancel()
        idleTask = nil
        deadlineTask = nil
    }
}
