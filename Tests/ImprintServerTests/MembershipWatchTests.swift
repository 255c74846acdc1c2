import Foundation
import ImprintDelivery
import ImprintServerTestSupport
import Testing
@testable import ImprintServer

/// `MembershipWatch`: ephemeral subscriptions check membership when a membership of their
/// member ends (its own bell key), not on every event of that member.
@Suite struct MembershipWatchTests {
    /// Removal and leaving ring the member's membership key once they commit; a message, which
    /// rings the recipients' event keys, does not.
    @Test(arguments: StoreKind.available)
    func onlyAnEndedMembershipRingsItsKey(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let bell = server.store.eventBell
            let alice = server.client(), bob = server.client(), carol = server.client()
            let convoId = try await alice.createConvo(CreateConvoInput(cipherSuite: 1)).convo.id
            _ = try await alice.addMembers(AddMembersInput(
                convoId: convoId, epoch: 0, dids: [bob.did, carol.did], commit: Data("c1".utf8), welcome: Data("w1".utf8)))

            var watches = [bob.did, carol.did].map { bell.subscribe(recipient: MembershipWatch.key($0)) }
            var events = bell.subscribe(recipient: bob.did)
            _ = try await alice.sendMessage(SendMessageInput(convoId: convoId, epoch: 1, messageType: .app, hash: fakeHash(1), size: 1))
            #expect(await EventBellTests.wakeups(events, of: bell) == 1, "the message is an event for bob")
            #expect(await EventBellTests.wakeups(watches[0], of: bell) == 0, "but no membership of his ended")
            #expect(await EventBellTests.wakeups(watches[1], of: bell) == 0)

            watches = [bob.did, carol.did].map { bell.subscribe(recipient: MembershipWatch.key($0)) }
            _ = try await alice.removeMember(RemoveMemberInput(convoId: convoId, epoch: 1, did: carol.did, commit: Data("c2".utf8)))
            #expect(await EventBellTests.wakeups(watches[1], of: bell) == 1, "carol was removed")
            #expect(await EventBellTests.wakeups(watches[0], of: bell) == 0)

            let bobWatch = bell.subscribe(recipient: MembershipWatch.key(bob.did))
            events = bell.subscribe(recipient: bob.did)
            try await bob.leaveConvo(convoId: convoId)
            #expect(await EventBellTests.wakeups(bobWatch, of: bell) == 1, "bob left")
            #expect(await EventBellTests.wakeups(events, of: bell) == 1)
        }
    }

    /// The checks follow the membership key: rings of the member's event key alone leave the
    /// heartbeat as the first check.
    @Test func eventsOfTheMemberAreNoCheck() async {
        let bell = EventBell()
        let member = "did:plc:ben"
        var checks = MembershipWatch.checks(bell: bell, member: member, heartbeat: .milliseconds(300)).makeAsyncIterator()
        for _ in 0..<20 { bell.ring(recipients: [member]) }
        #expect(await checks.next() == .heartbeat)
        bell.ring(recipients: [MembershipWatch.key(member)])
        var reasons: [MembershipWatch.Reason] = []
        while reasons.last != .event, reasons.count < 20, let reason = await checks.next() { reasons.append(reason) }
        #expect(reasons.last == .event, "\(reasons)")
    }
}
