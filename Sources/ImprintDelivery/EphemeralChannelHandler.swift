import NIOCore
import NIOWebSocket

/// The channel handler under an ``EphemeralChannel``: it runs on the connection's event loop,
/// after the WebSocket frame decoder and the fragment aggregator.
///
/// - A binary message is decoded (``EphemeralSocketFrame/decodeMessage(_:convoId:)``) and
///   yielded to the channel's messages right here, on the event loop. One that does not decode
///   ends the messages with its error and closes the connection: the service only sends
///   well-formed ones.
/// - A ping is answered with a pong carrying its data; text and pong frames are ignored.
/// - A close frame from the service is answered with one, and ends the messages: without an
///   error for 1000 (normal) and 1001 (going away) or no code, with ``EphemeralChannelClosed``
///   for any other code (`NotMember`, `InvalidRequest`).
/// - The connection ending any other way ends the messages with the error that ended it
///   (`ChannelError.eof` when it simply closed), unless this side closed it
///   (``closeHere()``): then without an error.
final class EphemeralChannelHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let convoId: String
    private let sink: AsyncThrowingStream<EphemeralMessage, any Error>.Continuation
    private var context: ChannelHandlerContext?
    /// Set once a close frame went out: none is sent twice.
    private var closeSent = false
    /// Set once the messages ended: how they end is decided once.
    private var finished = false

    init(convoId: String, sink: AsyncThrowingStream<EphemeralMessage, any Error>.Continuation) {
        self.convoId = convoId
        self.sink = sink
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        finish(nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary:
            do {
                sink.yield(try EphemeralSocketFrame.decodeMessage(frame.unmaskedData, convoId: convoId))
            } catch {
                finish(error)
                context.close(promise: nil)
            }
        case .ping:
            guard frame.fin else {
                sendClose(context: context, code: .protocolError)
                return
            }
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            var data = frame.unmaskedData
            let code = data.readWebSocketErrorCode()
            let reason = data.readString(length: data.readableBytes) ?? ""
            let number = code.map { Int(UInt16(webSocketErrorCode: $0)) }
            finish(number.flatMap { $0 == 1000 || $0 == 1001 ? nil : EphemeralChannelClosed(code: $0, reason: reason) })
            // Answer it (RFC 6455, 7.1.1); the connection closes once the answer is written.
            sendClose(context: context, code: code ?? .normalClosure)
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(closeSent ? nil : ChannelError.eof)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(error)
        context.close(promise: nil)
    }

    /// Closes the socket from this side: a normal close frame, then the connection; the
    /// messages end without an error.
    func closeHere() {
        finish(nil)
        guard let context else { return }
        sendClose(context: context, code: .normalClosure)
    }

    private func sendClose(context: ChannelHandlerContext, code: WebSocketErrorCode) {
        guard !closeSent else { return }
        closeSent = true
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in channel.close(promise: nil) }
    }

    private func finish(_ error: (any Error)?) {
        guard !finished else { return }
        finished = true
        if let error { sink.finish(throwing: error) } else { sink.finish() }
    }
}
