import Foundation
import ImprintZones

/// What a courier did with one queued delivery (`SyncState.InboxDelivery`).
struct InboxCopyOutcome: Sendable, Hashable {
    var seq: Int
    /// The delivery's server (nil: the document's).
    var endpoint: String?
    /// The recipients whose copies it tried.
    var tried: [String]
    /// Those of `tried` whose copies failed and are tried again later.
    var failed: [String]
}

/// One queued delivery as a courier carries it: the capabilities to present are derived on
/// the document's actor, from the epoch the copies were queued in or a later one.
struct InboxCourierItem: Sendable {
    var delivery: SyncState.InboxDelivery
    var capabilities: [String: String]
}

/// Inbox copies are carried by one **courier** per server: a task that saves that server's
/// queued copies, message after message, apart from the operation that queued them.
///
/// Guarantees:
/// - **Durable first.** A copy is queued in the sync state (`SyncState.inboxPending`) before
///   any courier carries it, and leaves the queue only once its server took it, refused it
///   for good, or failed it `MailboxPolicy.maximumAttempts` times. A process that ends while a
///   courier is on its way loses nothing: the next push or `finishOutbox` carries the copy
///   again (saves are idempotent: a copy's record names come from convo and seq).
/// - **One server never holds up another, nor the next push.** Couriers of different servers
///   run at once. The push that starts them waits for them at most
///   `SyncOptions.inboxCopyWait`; a courier still on its way then goes on by itself and
///   writes its outcome into the sync state when it arrives, under the operation gate
///   (`exclusive`), like any operation. Meanwhile no second courier is sent to its server:
///   that server's later copies stay queued, and the late courier starts a new one for them
///   when it is done.
/// - **Bounded.** Every request a courier makes has a timeout (`ZoneEndpoints`), and a server
///   that stopped answering is skipped at once while its circuit is open (`EndpointCircuit`).
///   `finishInboxCopies()` waits for the couriers still on their way, for callers that are
///   about to exit (`imprint push`).
///
/// ```
/// push seq 41 ── own server A (fast):  saved in 30 ms          ─┐
///             └─ own server B (slow):  still saving after 2 s  ─┼─ push returns after 2 s
/// push seq 42 ── A: saved; B: courier still on its way, 42 stays queued for B
/// B's courier arrives: 41 leaves the queue, a new courier takes 42 to B
/// ```
extension SharedDocument {
    /// Starts a courier for each server with queued copies and none on its way, and waits for
    /// them at most `SyncOptions.inboxCopyWait` (`known`: ciphertexts at hand, by seq). Copies
    /// for members no longer in the group, or who processed the seq already, are dropped first.
    func deliverInboxCopies(known: [Int: [UInt8]] = [:]) async throws {
        guard !state.inboxPending.isEmpty else { return }
        let members = Set(try MemberCredential.roster(of: group).values)
        // A retried copy is of no use to a recipient who has processed its seq meanwhile (read
        // from the shared zone while its inbox was unreachable): asked once per round.
        var processed: [String: Int] = [:]
        let idle = state.inboxPending.filter { inboxCouriers[Self.courierKey($0.endpoint)] == nil }
        if idle.contains(where: { known[$0.seq] == nil }), let cursors = try? await account.delivery.getCursors(convoId: convoId) {
            processed = Dictionary(cursors.cursors.map { ($0.did, $0.processedSeq) }, uniquingKeysWith: max)
        }
        var kept: [SyncState.InboxDelivery] = []
        for var delivery in state.inboxPending {
            delivery.dids = delivery.dids.filter { members.contains($0) && processed[$0, default: 0] < delivery.seq }
            if !delivery.dids.isEmpty { kept.append(delivery) }
        }
        if kept != state.inboxPending {
            state.inboxPending = kept
            try saveState()
        }
        let started = try startCouriers(known: known)
        guard !started.isEmpty else { return }
        let arrived = await Self.outcomes(of: started, within: account.options.inboxCopyWait)
        for (key, outcomes) in arrived {
            inboxCouriers[key] = nil
            recordCourierOutcomes(outcomes)
        }
        if !arrived.isEmpty { try saveState() }
        for (key, courier) in started where arrived[key] == nil { awaitLate(courier, key: key) }
    }

    /// Leaves `courier` to arrive by itself: `lateCouriers[key]` records its outcome when it does.
    func awaitLate(_ courier: Task<[InboxCopyOutcome], Never>, key: String) {
        lateCouriers[key] = Task.detached { [self] in
            await self.courierArrivedLate(key, outcomes: await courier.value)
        }
    }

    /// Waits for the couriers still on their way (started by earlier pushes that did not wait
    /// for them to arrive) and for the couriers their arrival starts. Call it before a process
    /// that pushed exits, so that copies in flight are not left for its next run. Returns at
    /// once inside an operation (the couriers need the operation gate to record what they did).
    public func finishInboxCopies() async {
        guard !Self.insideOperation else { return }
        while let late = lateCouriers.values.first {
            await late.value
        }
    }

    /// Starts a courier for every server with queued copies and no courier on its way.
    func startCouriers(known: [Int: [UInt8]]) throws -> [String: Task<[InboxCopyOutcome], Never>] {
        var byServer: [String: [InboxCourierItem]] = [:]
        for delivery in state.inboxPending.sorted(by: { $0.seq < $1.seq }) {
            let key = Self.courierKey(delivery.endpoint)
            guard inboxCouriers[key] == nil else { continue }
            var capabilities: [String: String] = [:]
            if delivery.endpoint != nil {
                for did in delivery.dids { capabilities[did] = try inboxCapability(of: did) }
            }
            byServer[key, default: []].append(InboxCourierItem(delivery: delivery, capabilities: capabilities))
        }
        var started: [String: Task<[InboxCopyOutcome], Never>] = [:]
        let account = account, convoId = convoId
        for (key, items) in byServer {
            let carried = known.filter { seq, _ in items.contains { $0.delivery.seq == seq } }
            let courier = Task.detached { await Self.carry(items, known: carried, convoId: convoId, account: account) }
            inboxCouriers[key] = Set(items.map(\.delivery.seq))
            started[key] = courier
        }
        return started
    }

    /// Records what a courier that the push stopped waiting for did, under the operation gate
    /// (from the state on disk, which other operations moved on meanwhile), and sends the
    /// next courier to its server if copies were queued for it since. Runs as
    /// `lateCouriers[key]`, and leaves there the task that waits for that next courier, if any.
    func courierArrivedLate(_ key: String, outcomes: [InboxCopyOutcome]) async {
        do {
            try await exclusive {
                inboxCouriers[key] = nil
                lateCouriers[key] = nil
                recordCourierOutcomes(outcomes)
                try saveState()
                let carried = Set(outcomes.map(\.seq))
                let next = state.inboxPending.contains { Self.courierKey($0.endpoint) == key && !carried.contains($0.seq) }
                guard next, let courier = try startCouriers(known: [:])[key] else { return }
                awaitLate(courier, key: key)
            }
        } catch {
            // The outcomes are not recorded: the copies stay queued and are carried again by
            // the next push (saving one twice changes nothing).
            inboxCouriers[key] = nil
            lateCouriers[key] = nil
        }
    }

    /// Takes `outcomes` into the queue: copies saved or refused for good leave it, failed
    /// ones stay with one more failure (and leave after `MailboxPolicy.maximumAttempts`).
    /// Copies queued since the courier left, and recipients it did not try, are untouched.
    func recordCourierOutcomes(_ outcomes: [InboxCopyOutcome]) {
        for outcome in outcomes {
            guard let index = state.inboxPending.firstIndex(where: { $0.seq == outcome.seq && $0.endpoint == outcome.endpoint }) else {
                continue
            }
            var entry = state.inboxPending[index]
            let tried = Set(outcome.tried), failed = Set(outcome.failed)
            entry.dids = entry.dids.filter { !tried.contains($0) || failed.contains($0) }
            if !failed.isEmpty {
                entry.failures += 1
                if entry.failures >= MailboxPolicy.maximumAttempts { entry.dids.removeAll { failed.contains($0) } }
            }
            if entry.dids.isEmpty {
                state.inboxPending.remove(at: index)
            } else {
                state.inboxPending[index] = entry
            }
        }
    }

    /// A courier's key: its server's endpoint, "" for the document's server.
    static func courierKey(_ endpoint: String?) -> String { endpoint ?? "" }

    /// The outcomes of those of `couriers` that arrive within `wait`, by key.
    static func outcomes(of couriers: [String: Task<[InboxCopyOutcome], Never>],
                         within wait: Duration) async -> [String: [InboxCopyOutcome]] {
        let (arrivals, arrival) = AsyncStream.makeStream(of: (String, [InboxCopyOutcome]).self)
        for (key, courier) in couriers {
            Task { arrival.yield((key, await courier.value)) }
        }
        let deadline = Task {
            try? await Task.sleep(for: wait)
            arrival.finish()
        }
        defer {
            deadline.cancel()
            arrival.finish()
        }
        var arrived: [String: [InboxCopyOutcome]] = [:]
        for await (key, outcomes) in arrivals {
            arrived[key] = outcomes
            if arrived.count == couriers.count { break }
        }
        return arrived
    }

    /// One courier's journey: `items` (one server's copies, by seq) saved one message after
    /// the other. A message's ciphertext comes from `known` or the shared zone; one not
    /// readable there right now is left queued untouched. A server that cannot be reached
    /// fails every copy for it.
    static func carry(_ items: [InboxCourierItem], known: [Int: [UInt8]], convoId: String,
                      account: SyncAccount) async -> [InboxCopyOutcome] {
        guard let first = items.first else { return [] }
        var foreign: HTTPZoneStore?
        if let endpoint = first.delivery.endpoint { foreign = try? await account.endpoints.store(at: endpoint) }
        let reachable = first.delivery.endpoint == nil || foreign != nil
        var outcomes: [InboxCopyOutcome] = []
        for item in items {
            let delivery = item.delivery
            var failed = delivery.dids
            if reachable {
                var ciphertext = known[delivery.seq]
                if ciphertext == nil { ciphertext = try? await fetchPayload(seq: delivery.seq, convoId: convoId, account: account) }
                guard let ciphertext else { continue }
                let target = InboxTarget(zones: foreign ?? account.zones, foreign: foreign, capabilities: item.capabilities)
                if let results = try? await saveCopies(ciphertext, delivery: delivery, convoId: convoId, target: target) {
                    failed = results.filter { if case .failed = $0.1 { true } else { false } }.map(\.0)
                }
            }
            outcomes.append(InboxCopyOutcome(seq: delivery.seq, endpoint: delivery.endpoint, tried: delivery.dids, failed: failed))
        }
        return outcomes
    }
}
