import Foundation
import ImprintServerTestSupport
import ImprintSync
import Testing

/// Two members commit in the same epoch at the same time: the Delivery Service takes one
/// (409 for the other); the loser processes the winner's commit, rebuilds its own in the new
/// epoch and succeeds; edits made meanwhile still reach everyone.
extension SyncSuites {
@Suite struct RacingCommitsTests {
    @Test(arguments: StoreKind.available)
    func theLoserOfARaceRetriesInTheNextEpoch(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob"), carol = try await server.person("carol")
            try alice.createBundle(text: "race")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            let before = try await aliceDoc.members().epoch
            try await bobDoc.edit { try $0.insert(" bob", at: 4) }
            // Bob rotates his leaf while Alice adds Carol: both commit in the same epoch.
            async let rotated: Void = bobDoc.update()
            async let invited = aliceDoc.invite([carol.did])
            _ = try await (rotated, invited)
            let carolDoc = try await carol.join(aliceDoc.convoId)
            try await bobDoc.push()
            for doc in [aliceDoc, bobDoc, carolDoc] { try await doc.pull() }
            let epochs = try await [aliceDoc.members().epoch, bobDoc.members().epoch, carolDoc.members().epoch]
            #expect(Set(epochs).count == 1 && epochs[0] == before + 2, "both commits landed, one after the other: \(epochs)")
            #expect(try alice.text() == "race bob" && carol.text() == "race bob" && bob.text() == "race bob")
        }
    }
}
}
