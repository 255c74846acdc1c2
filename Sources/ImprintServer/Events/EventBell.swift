import NIOConcurrencyHelpers

/// In-process wake-up for event subscribers: `ring()` after events are committed, and
/// every subscription's stream yields. It carries no data; subscribers re-read the store.
/// On PostgreSQL a LISTEN connection rings it for events written by other instances.
public final class EventBell: Sendable {
    private struct State {
        var nextID: UInt64 = 0
        var subscribers: [UInt64: AsyncStream<Void>.Continuation] = [:]
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// A stream that yields once per ring (coalesced while unread), and its handle for `unsubscribe`.
    public func subscribe() -> (id: UInt64, rings: AsyncStream<Void>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLockedValue { state in
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            return state.nextID
        }
        return (id, stream)
    }

    public func unsubscribe(_ id: UInt64) {
        state.withLockedValue { $0.subscribers.removeValue(forKey: id) }?.finish()
    }

    /// Wakes one subscriber (heartbeats).
    public func ring(_ id: UInt64) {
        _ = state.withLockedValue { $0.subscribers[id] }?.yield()
    }

    public func ring() {
        for continuation in state.withLockedValue({ Array($0.subscribers.values) }) {
            continuation.yield()
        }
    }

    /// Ends every subscription (graceful shutdown).
    public func closeAll() {
        let all = state.withLockedValue { state in
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in all { continuation.finish() }
    }

    public var subscriberCount: Int { state.withLockedValue { $0.subscribers.count } }
}
