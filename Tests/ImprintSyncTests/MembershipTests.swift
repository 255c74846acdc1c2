import Foundation
import ImprintDelivery
import ImprintMLS
import ImprintServerTestSupport
import ImprintSync
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
