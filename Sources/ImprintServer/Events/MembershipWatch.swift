/// When an ephemeral subscription (`subscribeEphemeral`'s stream, `ephemeralSocket`'s socket)
/// checks again that its member is still an active member of the convo: at every heartbeat,
/// and as soon as a membership of that member ends.
///
/// Removing a member and a member leaving ring that member's membership key (``key(_:)``, an
/// ``EventBell`` key beside its event key) after the commit, on PostgreSQL on every instance
/// through `NOTIFY imprint_events`. So a subscription that checks on every such ring stops
/// relaying to a removed member within one store read of the removal, not up to a heartbeat
/// later; the heartbeat stays as the fallback for a ring that never comes (a notification
/// connection that was down). The member's other events (its messages in every convo) ring
/// only its event key: a busy member's subscriptions read nothing more than their heartbeats.
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
        /// A membership of the member ended (in some convo: the check tells which).
        case event
    }

    /// The bell key rung when a membership of `did` ends (removed or left). DIDs begin with
    /// `did:` and zone keys with `zone:`, so it names nothing else.
    static func key(_ did: String) -> String { "membership:" + did }

    /// The checks due for `member`, until the consumer stops iterating (which ends the
    /// heartbeat and the bell subscription). Reasons that arrive while a check runs wait, at
    /// most two of them (the newest): a burst of rings may take the place of a heartbeat's
    /// keep-alive, never of a check.
    static func checks(bell: EventBell, member: String, heartbeat: Duration) -> AsyncStream<Reason> {
        let (stream, continuation) = AsyncStream.makeStream(of: Reason.self, bufferingPolicy: .bufferingNewest(2))
        let (subscription, rings) = bell.subscribe(recipient: key(member))
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
