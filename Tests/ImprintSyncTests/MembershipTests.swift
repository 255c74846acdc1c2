import Foundation
import ImprintDelivery
import ImprintMLS
import ImprintServerTestSupport
@testable import ImprintSync
import ImprintZones
import Testing

/// Removing and leaving: a removed member reads nothing sent after its removal, even with its
/// old MLS state in hand, and both servers refuse it at once.
extension SyncSuites {
@Suite struct MembershipTests {
    @Test(arguments: StoreKind.available)
    func aRemovedMemberReadsNothingNew(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "before")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            let convo = aliceDoc.convoId
            // Bob's client keeps a copy of its state, as a compromised client would.
            let kept = try #require(try bob.account.keyStore.groupState(convo: convo, for: bob.account.keyStore.deviceIdentity().did))

            try await aliceDoc.remove(bob.did)
            try alice.edit { try $0.insert(" after: NEW-SECRET", at: 6) }
            let sent = try await aliceDoc.push()
            let seq = try #require(sent.seq)

            // The servers refuse Bob at once.
            await #expect(throws: SyncError(.removed, "")) { try await bobDoc.pull() }
            do {
                _ = try await bob.account.zones.record(zoneId: "doc_\(convo)", named: "\(convo)-\(seq).0")
                Issue.record("the zone served a removed member")
            } catch let error as ZoneError {
                #expect(error.code == .forbidden, "\(error)")
            }
            // The ciphertext (fetched by a member) does not open with Bob's old state.
            let record = try await alice.account.zones.record(zoneId: "doc_\(convo)", named: "\(convo)-\(seq).0")
            let ciphertext = try await alice.account.zones.fetchAsset(zoneId: "doc_\(convo)", hash: record.asset.hash)
            var old = try MLSGroup(serializedState: kept.state)
            #expect(throws: MLSError.self) { try old.process(try MLSMessage(tlsBytes: ciphertext)) }
            #expect(try !bob.text().contains("NEW-SECRET"))
            // Bob's keys for the document are gone from his key store (forward secrecy).
            #expect(try bob.account.keyStore.groupState(convo: convo, for: bob.account.keyStore.deviceIdentity().did) == nil)
            let status = await bobDoc.status()
            #expect(status.ended?.contains("no longer") == true || status.ended?.contains("removed") == true)
            #expect(try await aliceDoc.members().members.map(\.did) == [alice.did])
        }
    }

    /// The sharer names Bob an admin: before, Bob may neither add members nor name admins;
    /// after, his invite and removal are accepted by the Delivery Service and by Carol, who
    /// processes his commits. A DID that is not a member cannot be named.
    @Test(arguments: StoreKind.available)
    func theSharerNamesAnAdminWhoseCommitsEveryMemberAccepts(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            let carol = try await server.person("carol"), dave = try await server.person("dave")
            try alice.createBundle(text: "Roles.")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did, carol.did])
            let bobDoc = try await bob.join(aliceDoc.convoId), carolDoc = try await carol.join(aliceDoc.convoId)

            await #expect(throws: SyncError(.forbidden, "")) { try await bobDoc.invite([dave.did]) }
            await #expect(throws: SyncError(.forbidden, "")) { try await bobDoc.setAdmins([bob.did]) }
            await #expect(throws: SyncError(.notMember, "")) { try await aliceDoc.setAdmins([dave.did]) }
            #expect(try await aliceDoc.setAdmins([bob.did]) == [alice.did, bob.did])

            _ = try await carolDoc.pull()
            #expect(await carolDoc.admins == [alice.did, bob.did])
            let added = try await bobDoc.invite([dave.did])
            #expect(added == [dave.did])
            let daveDoc = try await dave.join(aliceDoc.convoId)
            try dave.edit { try $0.insert(" Dave was here.", at: 6) }
            try await daveDoc.push()
            // Carol processes the commit of an admin the sharer named: it is not refused.
            _ = try await carolDoc.pull()
            #expect(Set(try await carolDoc.members().members.map(\.did)) == [alice.did, bob.did, carol.did, dave.did])
            #expect(try carol.text() == "Roles. Dave was here.")
            #expect(await carolDoc.status().alerts.isEmpty)

            try await bobDoc.remove(dave.did)
            _ = try await carolDoc.pull()
            _ = try await aliceDoc.pull()
            #expect(Set(try await carolDoc.members().members.map(\.did)) == [alice.did, bob.did, carol.did])
            #expect(try await aliceDoc.members().members.first { $0.did == bob.did }?.isAdmin == true)
            let aliceAlerts = await aliceDoc.status().alerts, carolAlerts = await carolDoc.status().alerts
            #expect(aliceAlerts.isEmpty && carolAlerts.isEmpty, "\(aliceAlerts) \(carolAlerts)")
        }
    }

    /// A commit that breaks the group's policy is refused by the members who process it, even
    /// when the Delivery Service let it through: here the DS was told Bob is an admin (the
    /// sharer's `setAdmins` call without the group message), and Bob's client believes it too,
    /// but the group never named him. Carol's pull refuses his invite commit, says why in her
    /// alerts, and does not move past it.
    @Test(arguments: StoreKind.available)
    func aCommitByAMemberTheGroupDidNotNameIsRefused(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            let carol = try await server.person("carol"), dave = try await server.person("dave")
            try alice.createBundle(text: "Policy.")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did, carol.did])
            let bobDoc = try await bob.join(aliceDoc.convoId), carolDoc = try await carol.join(aliceDoc.convoId)
            _ = try await alice.account.delivery.setAdmins(SetAdminsInput(convoId: aliceDoc.convoId, admins: [bob.did]))
            try await bobDoc.claimAdminForTesting()
            #expect(try await bobDoc.invite([dave.did]) == [dave.did], "the Delivery Service let it through")

            let epoch = await carolDoc.status().epoch
            await #expect(throws: SyncError(.forbidden, "")) { try await carolDoc.pull() }
            let status = await carolDoc.status()
            #expect(status.alerts.contains { $0.contains("not an admin") && $0.contains(dave.did) }, "\(status.alerts)")
            #expect(status.epoch == epoch, "the refused commit was not applied")
            #expect(try await carolDoc.members().members.map(\.did).contains(dave.did) == false)
        }
    }

    @Test(arguments: StoreKind.available)
    func aMemberWhoLeavesSendsFirstAndIsRemovedByTheNextCommit(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "draft")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            try bob.edit { try $0.insert(" (bob's last words)", at: 5) }
            try await bobDoc.leave() // pushes first
            await #expect(throws: SyncError(.removed, "")) { try await bobDoc.push() }
            try await aliceDoc.pull()
            #expect(try alice.text() == "draft (bob's last words)")
            // Bob is still in the MLS tree until the next commit, which removes him.
            #expect(try await aliceDoc.members().members.count == 2)
            try await aliceDoc.update()
            #expect(try await aliceDoc.members().members.map(\.did) == [alice.did])
        }
    }
}
}

extension SharedDocument {
    /// Makes this member's own state list it as an admin, as a client that ignores the
    /// group's policy would (tests of the members' enforcement).
    func claimAdminForTesting() throws {
        if !state.admins.contains(did) { state.admins.append(did) }
        try saveState()
    }
}
