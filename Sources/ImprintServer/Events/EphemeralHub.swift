import ImprintDelivery
import NIOConcurrencyHelpers

/// In-process fan-out of ephemeral messages (`sendEphemeral`) to the `subscribeEphemeral`
/// streams and the ephemeral sockets of one convo. Nothing is kept: a message reaches the
/// subscriptions open when it is published. A stream subscription buffers at most
/// ``bufferedMessages`` of them (the oldest go first when a subscriber reads slowly: presence
/// is only worth its newest state); a direct one (``subscribe(convoId:deliver:finish:)``) is
/// handed each message as it is published, on the publisher's thread, and bounds its own
/// backlog.
///
/// On PostgreSQL every instance's hub is fed by `NOTIFY imprint_ephemeral`, so a member
/// connected to any instance gets the messages sent through every other.
public final class EphemeralHub: Sendable {
    /// Messages a subscription holds while its reader is busy.
    public static let bufferedMessages = 64

    /// Where a subscription's messages go, and how it is ended.
    private struct Subscriber: Sendable {
        let deliver: @Sendable (EphemeralMessage) -> Void
        let finish: @Sendable () -> Void
    }

    private struct State {
        var nextID: UInt64 = 0
        var byConvo: [String: [UInt64: Subscriber]] = [:]
        var convoOf: [UInt64: String] = [:]
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// A stream of the messages published for `convoId` from now on, and its handle.
    /// `dropped` is called for each message the stream's full buffer pushes out.
    public func subscribe(convoId: String, dropped: @escaping @Sendable () -> Void = {}) -> (id: UInt64, messages: AsyncStream<EphemeralMessage>) {
        let (stream, continuation) = AsyncStream.makeStream(of: EphemeralMessage.self, bufferingPolicy: .bufferingNewest(Self.bufferedMessages))
        let id = subscribe(convoId: convoId, deliver: { message in
            if case .dropped = continuation.yield(message) { dropped() }
        }, finish: { continuation.finish() })
        return (id, stream)
    }

    /// Hands every message published for `convoId` from now on to `deliver`, at once, on the
    /// publishing thread (so `deliver` must not block: an ephemeral socket hands the frame to
    /// its event loop), and calls `finish` when the hub closes its subscriptions
    /// (``closeAll()``). Returns the subscription's handle for ``unsubscribe(_:)``.
    public func subscribe(convoId: String, deliver: @escaping @Sendable (EphemeralMessage) -> Void,
                          finish: @escaping @Sendable () -> Void) -> UInt64 {
        let subscriber = Subscriber(deliver: deliver, finish: finish)
        return state.withLockedValue { state in
            state.nextID += 1
            state.byConvo[convoId, default: [:]][state.nextID] = subscriber
            state.convoOf[state.nextID] = convoId
            return state.nextID
        }
    }

    /// Ends a subscription (its stream finishes; a direct one's `finish` is called).
    public func unsubscribe(_ id: UInt64) {
        let removed = state.withLockedValue { state -> Subscriber? in
            guard let convo = state.convoOf.removeValue(forKey: id) else { return nil }
            defer { if state.byConvo[convo]?.isEmpty == true { state.byConvo.removeValue(forKey: convo) } }
            return state.byConvo[convo]?.removeValue(forKey: id)
        }
        removed?.finish()
    }

    /// Hands `message` to every open subscription of its convo.
    public func publish(_ message: EphemeralMessage) {
        for subscriber in state.withLockedValue({ Array(($0.byConvo[message.convoId] ?? [:]).values) }) {
            subscriber.deliver(message)
        }
    }

    /// Ends every subscription (graceful shutdown).
    public func closeAll() {
        let all = state.withLockedValue { state in
            defer { state = State(nextID: state.nextID) }
            return state.byConvo.values.flatMap(\.values)
        }
        for subscriber in all { subscriber.finish() }
    }
}
