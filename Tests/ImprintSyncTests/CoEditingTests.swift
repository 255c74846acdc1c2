import Foundation
import ImprintServerTestSupport
import ImprintSync
import Testing

/// Two and three people co-editing one document through a real server (Delivery Service and
/// zone service on loopback), on SQLite and PostgreSQL.
extension SyncSuites {
@Suite struct CoEditingTests {
    @Test(arguments: StoreKind.available)
    func twoPeopleEditBothWays(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "Hello world")
            let aliceDoc = try await alice.share()
            #expect(try await aliceDoc.invite([bob.did]) == [bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            #expect(try await bobDoc.text() == "Hello world")

            try bob.edit { try $0.insert(", Bob here", at: 11) }
            let pushed = try await bobDoc.push()
            #expect(pushed.changes == 1 && pushed.seq != nil)
            let pulled = try await aliceDoc.pull()
            #expect(pulled.messages == 1 && pulled.changes == 1)
            #expect(try alice.text() == "Hello world, Bob here")

            try alice.edit { try $0.insert("Dear all. ", at: 0) }
            try await aliceDoc.push()
            try await bobDoc.pull()
            #expect(try bob.text() == "Dear all. Hello world, Bob here")
            #expect(try alice.text() == bob.text())

            // Nothing left to send on either side; status agrees.
            #expect(try await aliceDoc.push().changes == 0)
            #expect(try await bobDoc.push().changes == 0)
            let status = await bobDoc.status()
            #expect(status.unpushedChanges == 0 && status.gaps.isEmpty && status.outbox == 0 && status.alerts.isEmpty)
            #expect(status.latestSeq == status.processedSeq)
            let members = try await aliceDoc.members()
            #expect(Set(members.members.map(\.did)) == [alice.did, bob.did])
            #expect(members.members.first { $0.did == alice.did }?.isAdmin == true)
        }
    }
}
}
