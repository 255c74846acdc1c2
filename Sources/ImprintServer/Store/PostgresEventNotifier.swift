import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// Tells the other instances on the database which recipients have new events, so they ring
/// those keys of their `EventBell`s: `NOTIFY imprint_events` with an `EventNotificationPayload`,
/// sent *after* the writing transaction committed and coalesced across requests.
///
/// NOTIFY inside a transaction is not free: at COMMIT PostgreSQL appends to one queue under a
/// database-wide lock, which would serialize the commits of every event-writing request. The
/// bell carries no events (subscribers re-read the store from their cursor), so one
/// notification naming the union of a burst's recipients says all that many would. So at most
/// one `SELECT pg_notify(…)` is in flight per instance; signals arriving meanwhile are folded
/// into exactly one more, which starts after all of them and names all their recipients (or
/// everyone, once they no longer fit in a payload). A notification lost because the instance
/// dies between COMMIT and NOTIFY delays remote subscribers until their heartbeat; it never
/// loses an event.
final class PostgresEventNotifier: Sendable {
    private struct State {
        var sending = false
        var again = false
        /// Recipients of the commits not yet notified, unless `everyone` replaced them.
        var recipients: Set<String> = []
        var bytes = 0
        var everyone = false

        mutating func add<Recipients: Sequence<String>>(_ new: Recipients) {
            guard !everyone else { return }
            for recipient in new where recipients.insert(recipient).inserted {
                bytes += 1 + recipient.utf8.count
            }
            if bytes > EventNotificationPayload.maximumBytes {
                everyone = true
                recipients = []
                bytes = 0
            }
        }

        mutating func take() -> EventNotificationPayload {
            defer {
                again = false
                recipients = []
                bytes = 0
                everyone = false
            }
            return everyone ? .everyone : EventNotificationPayload(recipients: recipients.sorted())
        }
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

    /// Call after a transaction that wrote events for `recipients` committed.
    func signal<Recipients: Sequence<String>>(recipients: Recipients) {
        let start = state.withLockedValue { state in
            state.add(recipients)
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
            let payload = state.withLockedValue { $0.take() }
            if payload != .recipients([]) {
                do {
                    try await client.query("SELECT pg_notify(\(channel), \(payload.text))", logger: logger)
                } catch {
                    logger.warning("event notification failed; remote subscribers wait for their heartbeat", metadata: ["error": "\(error)"])
                }
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
