import ImprintDelivery
import NIOConcurrencyHelpers

/// In-process fan-out of ephemeral messages (`sendEphemeral`) to the `subscribeEphemeral`
/// streams of one convo. Nothing is kept: a message reaches the subscriptions open when it is
/// published, and each subscription buffers at most ``bufferedMessages`` of them (the oldest
/// go first when a subscriber reads slowly: presence is only worth its newest state).
///
/// On PostgreSQL every instance's hub is fed by `NOTIFY imprint_ephemeral`, so a member
/// connected to any instance gets the messages sent through every other.
public final class EphemeralHub: Sendable {
    /// Messages a subscription holds while its reader is busy.
    public static let bufferedMessages = 64

    private struct State {
        var nextID: UInt64 = 0
        var byConvo: [String: [UInt64: AsyncStream<EphemeralMessage>.Continuation]] = [:]
        var convoOf: [UInt64: String] = [:]
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// A stream of the messages published for `convoId` from now on, and its handle.
    public func subscribe(convoId: String) -> (id: UInt64, messages: AsyncStream<EphemeralMessage>) {
        let (stream, continuation) = AsyncStream.makeStream(of: EphemeralMessage.self, bufferingPolicy: .bufferingNewest(Self.bufferedMessages))
        let id = state.withLockedValue { state in
            state.nextID += 1
            state.byConvo[convoId, default: [:]][state.nextID] = continuation
            state.convoOf[state.nextID] = convoId
            return state.nextID
        }
        return (id, stream)
    }

    /// Ends a subscription's stream.
    public func unsubscribe(_ id: UInt64) {
        let removed = state.withLockedValue { state -> AsyncStream<EphemeralMessage>.Continuation? in
            guard let convo = state.convoOf.removeValue(forKey: id) else { return nil }
            defer { if state.byConvo[convo]?.isEmpty == true { state.byConvo.removeValue(forKey: convo) } }
            return state.byConvo[convo]?.removeValue(forKey: id)
        }
        removed?.finish()
    }

    /// Hands `message` to every open subscription of its convo.
    public func publish(_ message: EphemeralMessage) {
        for continuation in state.withLockedValue({ Array(($0.byConvo[message.convoId] ?? [:]).values) }) {
            continuation.yield(message)
        }
    }

    /// Ends every subscription (graceful shutdown).
    public func closeAll() {
        let all = state.withLockedValue { state in
            defer { state = State(nextID: state.nextID) }
            return state.byConvo.values.flatMap(\.values)
        }
        for continuation in all { continuation.finish() }
    }
}
