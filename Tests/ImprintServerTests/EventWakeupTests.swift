import Foundation
import ImprintServerTestSupport
import ImprintDelivery
import ImprintServer
import Testing

/// A committed write wakes the event subscriptions of its recipients, and no others.
@Suite struct EventWakeupTests {
    /// Waits for the subscription's next wake-up (at most 20 s).
    static func nextRing(_ rings: AsyncStream<Void>) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                var iterator = rings.makeAsyncIterator()
                return await iterator.next() != nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(20))
                throw EventStreamTests.TimeoutError()
            }
            let rang = try await group.next()!
            group.cancelAll()
            #expect(rang, "subscription ended instead of ringing")
        }
    }

    /// Subscribes a new member and an outsider on `observer`, writes through `writer` (a convo
    /// adding the member): the member is woken, the outsider is not.
    static func expectOnlyRecipientsWoken(writer: RunningServer, observer: RunningServer) async throws {
        let owner = writer.client()
        let member = ServiceAuthSigner()
        let outsider = ServiceAuthSigner()
        let bell = observer.store.eventBell
        let memberSubscription = bell.subscribe(recipient: member.did)
        let outsiderSubscription = bell.subscribe(recipient: outsider.did)
        let convoId = try await owner.createConvo(CreateConvoInput(cipherSuite: 1)).convo.id
        _ = try await owner.addMembers(AddMembersInput(
            convoId: convoId, epoch: 0, dids: [member.did], commit: Data([1]), welcome: Data([2])))
        try await Self.nextRing(memberSubscription.rings)
        #expect(await EventBellTests.wakeups(outsiderSubscription, of: bell) == 0)
        bell.unsubscribe(memberSubscription.id)
    }

    @Test func aWriteWakesOnlyItsRecipients() async throws {
        try await withServer(.sqlite) { server in
            try await Self.expectOnlyRecipientsWoken(writer: server, observer: server)
        }
    }

    /// PostgreSQL: the NOTIFY names the recipients, so the other instance wakes only theirs; and
    /// an instance's own write (rung locally, then heard back through LISTEN) likewise.
    @Test(.enabled(if: StoreKind.postgresURL != nil, "IMPRINT_TEST_POSTGRES_URL not set: keyed NOTIFY NOT TESTED"))
    func aNotificationWakesOnlyItsRecipientsOnEveryInstance() async throws {
        try await withTwoPostgresInstances { first, second in
            // The second instance rings everyone once when its LISTEN connects; wait for that
            // (or for the first notification, which also proves it listens) before observing.
            let probe = ServiceAuthSigner()
            let probeSubscription = second.store.eventBell.subscribe(recipient: probe.did)
            let owner = first.client()
            let convoId = try await owner.createConvo(CreateConvoInput(cipherSuite: 1)).convo.id
            _ = try await owner.addMembers(AddMembersInput(
                convoId: convoId, epoch: 0, dids: [probe.did], commit: Data([1]), welcome: Data([2])))
            try await Self.nextRing(probeSubscription.rings)
            second.store.eventBell.unsubscribe(probeSubscription.id)

            try await Self.expectOnlyRecipientsWoken(writer: first, observer: second)
            try await Self.expectOnlyRecipientsWoken(writer: second, observer: second)
        }
    }
}
