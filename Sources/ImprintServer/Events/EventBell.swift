import NIOConcurrencyHelpers

/// In-process wake-up for event subscribers, keyed by recipient DID: the key a subscription's
/// store query filters on (`events WHERE recipient = $1 AND id > cursor`). After a write
/// commits, `ring(recipients:)` wakes only the subscriptions of the DIDs it wrote events for;
/// `ringAll()` wakes every subscription when the written keys are unknown. It carries no data:
/// a woken subscriber re-reads the store from its cursor. On PostgreSQL a LISTEN connection
/// rings it for events written by other instances.
///
/// A subscription misses nothing as long as it subscribes *before* its first store read:
/// an event committed before the read is returned by it, and one committed after it rings the
/// subscription (rings come after COMMIT), which stays buffered until the subscriber next waits.
public final class EventBell: Sendable {
    private struct State {
        var nextID: UInt64 = 0
        var subscribers: [UInt64: (recipient: String, continuation: AsyncStream<Void>.Continuation)] = [:]
        var byRecipient: [String: [UInt64: AsyncStream<Void>.Continuation]] = [:]
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// A stream that yields once per ring of `recipient` (coalesced while unread), and its
    /// handle for `unsubscribe` and `ring(_:)`.
    public func subscribe(recipient: String) -> (id: UInt64, rings: AsyncStream<Void>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLockedValue { state in
            state.nextID += 1
            state.subscribers[state.nextID] = (recipient, continuation)
            state.byRecipient[recipient, default: [:]][state.nextID] = continuation
            return state.nextID
        }
        return (id, stream)
    }

    public func unsubscribe(_ id: UInt64) {
        let removed = state.withLockedValue { state -> AsyncStream<Void>.Continuation? in
            guard let (recipient, continuation) = state.subscribers.removeValue(forKey: id) else { return nil }
            state.byRecipient[recipient]?.removeValue(forKey: id)
            if state.byRecipient[recipient]?.isEmpty == true { state.byRecipient.removeValue(forKey: recipient) }
            return continuation
        }
        removed?.finish()
    }

    /// Wakes one subscription (heartbeats).
    public func ring(_ id: UInt64) {
        _ = state.withLockedValue { $0.subscribers[id]?.continuation }?.yield()
    }

    /// Wakes the subscriptions of these recipients: call after events for them committed.
    public func ring<Recipients: Sequence<String>>(recipients: Recipients) {
        let woken = state.withLockedValue { state in
            var woken: [AsyncStream<Void>.Continuation] = []
            for recipient in recipients {
                if let subscriptions = state.byRecipient[recipient] { woken.append(contentsOf: subscriptions.values) }
            }
            return woken
        }
        for continuation in woken { continuation.yield() }
    }

    /// Wakes every subscription: for commits whose recipients are unknown (a bare notification
    /// from another instance, or a LISTEN connection that was down).
    public func ringAll() {
        for continuation in state.withLockedValue({ $0.subscribers.values.map(\.continuation) }) {
            continuation.yield()
        }
    }

    /// Ends every subscription (graceful shutdown).
    public func closeAll() {
        let all = state.withLockedValue { state in
            defer {
                state.subscribers = [:]
                state.byRecipient = [:]
            }
            return state.subscribers.values.map(\.continuation)
        }
        for continuation in all { continuation.finish() }
    }

    public var subscriberCount: Int { state.withLockedValue { $0.subscribers.count } }
}
