/// When an ephemeral subscription (`subscribeEphemeral`'s stream, `ephemeralSocket`'s socket)
/// checks again that its member is still an active member of the convo: at every heartbeat,
/// and as soon as an event for that member commits.
///
/// Removing a member and a member leaving both write a `membership` event whose recipients
/// include that member, and ring its ``EventBell`` key after the commit (on PostgreSQL, on
/// every instance, through `NOTIFY imprint_events`). So a subscription that checks on every
/// ring stops relaying to a removed member within one store read of the removal, not up to a
/// heartbeat later; the heartbeat stays as the fallback for a ring that never comes (a
/// notification connection that was down).
///
/// Rings for other events of the member (its messages in any convo) trigger a check too; they
/// coalesce while one runs, so a busy member costs at most one membership read at a time.
///
/// ```swift
/// for await reason in MembershipWatch.checks(bell: store.eventBell, member: did, heartbeat: heartbeat) {
///     guard try await store.isActiveMember(convoId: convoId, did: did) else { break }
///     if reason == .heartbeat { /* keep-alive */ }
/// }
/// ```
enum MembershipWatch {
    /// Why a check is due.
    enum Reason: Sendable, Equatable {
        /// The subscription's heartbeat: also the moment for a keep-alive.
        case heartbeat
        /// An event for the member committed.
        case event
    }

    /// The checks due for `member`, until the consumer stops iterating (which ends the
    /// heartbeat and the bell subscription). Reasons that arrive while a check runs wait, at
    /// most two of them (the newest): a burst of events may take the place of a heartbeat's
    /// keep-alive, never of a check.
    static func checks(bell: EventBell, member: String, heartbeat: Duration) -> AsyncStream<Reason> {
        let (stream, continuation) = AsyncStream.makeStream(of: Reason.self, bufferingPolicy: .bufferingNewest(2))
        let (subscription, rings) = bell.subscribe(recipient: member)
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: heartbeat)
                if Task.isCancelled { break }
                continuation.yield(.heartbeat)
            }
        }
        let listener = Task {
            // The bell's stream coalesces rings while this loop waits on nothing else.
            for await _ in rings { continuation.yield(.event) }
        }
        continuation.onTermination = { _ in
            ticker.cancel()
            listener.cancel()
            bell.unsubscribe(subscription)
        }
        return stream
    }
}
