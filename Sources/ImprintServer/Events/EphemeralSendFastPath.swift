import ImprintDelivery
import NIOCore
import NIOWebSocket

/// The first stop of an ephemeral socket's frames, on the connection's event loop: a
/// well-formed send is relayed right here, so it reaches the other members' sockets (which the
/// hub writes to directly, ``EphemeralHub/subscribe(convoId:deliver:finish:)``) without waiting
/// for a task of Swift's cooperative pool to be scheduled. Installed only where the store
/// relays in-process (``DeliveryStore/relaysEphemeralInProcess``, SQLite); on PostgreSQL a
/// relay is a `NOTIFY`, a round trip, and every frame goes to the session.
///
/// Guarantees, beside ``EphemeralSocketSession``'s:
/// - **Same rules, same relay.** A send taken here passes the session's own check
///   (``EphemeralSocketSession/admit(_:)``: the frame's form, `sendEphemeral`'s rules, the
///   member's rate limit) and goes to the same hub.
/// - **Everything else is the session's.** Control frames go on to the session (pings,
///   pongs, the close handshake). The first data frame this does not take (text, a fragment,
///   an unmasked or malformed frame, one breaking the rules) goes on to the session, which
///   closes the socket with its code and reason, and so does every data frame after it: sends
///   are never relayed out of order.
final class EphemeralSendFastPath: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame

    private let session: EphemeralSocketSession
    /// Set at the first data frame handed to the session: every later one goes there too.
    private var handingOver = false

    init(session: EphemeralSocketSession) {
        self.session = session
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping, .pong, .connectionClose:
            context.fireChannelRead(data)
        case .binary where !handingOver && frame.fin && frame.maskKey != nil:
            let admitted: EphemeralMessage?
            do {
                admitted = try session.admit(frame.unmaskedData)
            } catch {
                // The session closes the socket with the reason.
                handingOver = true
                context.fireChannelRead(data)
                return
            }
            if let admitted { session.store.ephemeralHub.publish(admitted) }
        default:
            handingOver = true
            context.fireChannelRead(data)
        }
    }
}
