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
/// - **Same rules, same relay.** A send taken here passed the checks the session makes
///   (``EphemeralSocketFrame/decodeSend(_:convoId:)``, ``InputRules/ephemeral(_:maxBytes:)``,
///   the member's rate limit, counted the same way when exceeded) and goes to the same hub.
/// - **Everything else is the session's.** Control frames go on to the session (pings,
///   pongs, the close handshake). The first data frame this does not take (text, a fragment,
///   an unmasked or malformed frame, one breaking the rules) goes on to the session, which
///   closes the socket with its code and reason, and so does every data frame after it: sends
///   are never relayed out of order.
final class EphemeralSendFastPath: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame

    private let convoId: String
    private let member: String
    private let maxEphemeralBytes: Int
    private let rateLimiter: RateLimiter
    private let metrics: ServerMetrics
    private let hub: EphemeralHub
    /// Set at the first data frame handed to the session: every later one goes there too.
    private var handingOver = false

    init(convoId: String, member: String, maxEphemeralBytes: Int, rateLimiter: RateLimiter, metrics: ServerMetrics, hub: EphemeralHub) {
        self.convoId = convoId
        self.member = member
        self.maxEphemeralBytes = maxEphemeralBytes
        self.rateLimiter = rateLimiter
        self.metrics = metrics
        self.hub = hub
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping, .pong, .connectionClose:
            context.fireChannelRead(data)
        case .binary where !handingOver && frame.fin && frame.maskKey != nil:
            guard let input = try? EphemeralSocketFrame.decodeSend(frame.unmaskedData, convoId: convoId),
                  (try? InputRules.ephemeral(input, maxBytes: maxEphemeralBytes)) != nil else {
                handingOver = true
                context.fireChannelRead(data)
                return
            }
            guard rateLimiter.admit(member) else {
                // Dropped (an ephemeral message may always be lost), and counted as the
                // 429 a POST would have been answered with.
                metrics.recordRejection(DeliveryError.rateLimited().name)
                return
            }
            hub.publish(EphemeralMessage(convoId: convoId, sender: member, epoch: input.epoch, data: input.data, kind: input.kind))
        default:
            handingOver = true
            context.fireChannelRead(data)
        }
    }
}
