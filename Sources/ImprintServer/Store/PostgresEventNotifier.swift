import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// Tells the other instances on the database that events were committed, so they ring their
/// `EventBell`s: `NOTIFY imprint_events`, sent *after* the writing transaction committed and
/// coalesced across requests.
///
/// NOTIFY inside a transaction is not free: at COMMIT PostgreSQL appends to one queue under a
/// database-wide lock, which would serialize the commits of every event-writing request. The
/// bell carries no data (subscribers re-read the store from their cursor), so one notification
/// after a burst of commits says all that many would. So at most one `SELECT pg_notify(…)` is
/// in flight per instance; signals arriving meanwhile are folded into exactly one more, which
/// starts after all of them. A notification lost because the instance dies between COMMIT and
/// NOTIFY delays remote subscribers until their heartbeat; it never loses an event.
final class PostgresEventNotifier: Sendable {
    private struct State {
        var sending = false
        var again = false
    }

    private let client: PostgresClient
    private let logger: Logger
    private let channel: String
    private let state = NIOLockedValueBox(State())

    init(client: PostgresClient, channel: String, logger: Logger) {
        self.client = client
        self.channel = channel
        self.logger = logger
    }

    /// Call after a transaction that wrote events committed.
    func signal() {
        let start = state.withLockedValue { state in
            if state.sending {
                state.again = true
                return false
            }
            state.sending = true
            return true
        }
        if start { Task { await self.send() } }
    }

    private func send() async {
        while true {
            state.withLockedValue { $0.again = false }
            do {
                try await client.query("SELECT pg_notify(\(channel), '')", logger: logger)
            } catch {
                logger.warning("event notification failed; remote subscribers wait for their heartbeat", metadata: ["error": "\(error)"])
            }
            let more = state.withLockedValue { state in
                if state.again { return true }
                state.sending = false
                return false
            }
            if !more { return }
        }
    }
}
