import NIOConcurrencyHelpers
import NIOCore

/// Closes a connection that would take its client address past
/// ``ConnectionLimits/maxConnectionsPerAddress`` unauthenticated connections. One instance per
/// connection, all sharing one ``Counts``; a connection is counted from the moment it is
/// active until it closes or a request on it passes authentication (``XRPCGate`` sends
/// ``ConnectionAuthenticated`` down its pipeline): a slowloris client that never presents a
/// valid token is capped, members behind one address (a NAT, a proxy) are not.
final class ConnectionCap: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// Open connections per address, shared by every connection of one server.
    final class Counts: Sendable {
        private let counts = NIOLockedValueBox<[String: Int]>([:])

        /// Counts one more connection from `address` unless that passes `limit`.
        func admit(_ address: String, limit: Int) -> Bool {
            counts.withLockedValue { counts in
                let current = counts[address, default: 0]
                guard current < limit else { return false }
                counts[address] = current + 1
                return true
            }
        }

        func release(_ address: String) {
            counts.withLockedValue { counts in
                let remaining = counts[address, default: 1] - 1
                counts[address] = remaining > 0 ? remaining : nil
            }
        }

        /// Open connections of `address` (for tests and metrics).
        func open(_ address: String) -> Int { counts.withLockedValue { $0[address, default: 0] } }
    }

    private let counts: Counts
    private let limit: Int
    private var admitted: String?
    private var decided = false

    init(counts: Counts, limit: Int) {
        self.counts = counts
        self.limit = limit
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { decide(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        decide(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ConnectionAuthenticated { release() }
        context.fireUserInboundEventTriggered(event)
    }

    private func decide(_ context: ChannelHandlerContext) {
        guard !decided else { return }
        decided = true
        let address = Self.address(of: context.channel)
        if counts.admit(address, limit: limit) {
            admitted = address
        } else {
            context.close(promise: nil)
        }
    }

    private func release() {
        if let admitted { counts.release(admitted) }
        admitted = nil
    }

    /// The client's IP address (a Unix socket or an unknown peer counts as one address).
    static func address(of channel: any Channel) -> String {
        channel.remoteAddress?.ipAddress ?? "unknown"
    }
}

/// Told to a connection's pipeline when a request on it passed authentication: the
/// connection no longer counts against its address's cap (``ConnectionCap``).
struct ConnectionAuthenticated: Sendable {}
