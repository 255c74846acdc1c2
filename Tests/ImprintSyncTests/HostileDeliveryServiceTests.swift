import Foundation
import ImprintDelivery
import ImprintKeys
import ImprintMLS
import ImprintServerTestSupport
import ImprintSync
import Testing

/// The Delivery Service is not trusted with identities or with the history: a service that
/// swaps a key package is caught before anyone is added, and one that shows members
/// different histories is caught by the epoch authenticators members carry in their messages.
extension SyncSuites {
@Suite struct HostileDeliveryServiceTests {
    /// Mallory's own key package handed out for Bob: its credential names Mallory.
    @Test func aKeyPackageOfAnotherDIDIsRefused() async throws {
        try await SyncTestServer.with(.sqlite) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob"), mallory = try await server.person("mallory")
            let stolen = try await mallory.account.delivery.getKeyPackages(dids: [mallory.did], cipherSuite: 1).keyPackages[0].keyPackage
            try alice.createBundle(text: "secret plans")
            let doc = try await alice.share()
            let hostile = try await SharedDocument.open(bundleAt: alice.bundlePath, device: alice.device,
                                                        account: alice.account.with(delivery: HostileDeliveryService(
                                                            real: alice.account.delivery, behaviour: .swapKeyPackage(did: bob.did, replacement: stolen))))
            await #expect(throws: SyncError(.credentialMismatch, "")) { try await hostile.invite([bob.did]) }
            #expect(try await doc.members().members.map(\.did) == [alice.did], "nobody was added")
            await #expect(throws: SyncError(.noWelcome, "")) { try await mallory.join(doc.convoId) }
        }
    }

    /// A key package whose credential names Bob but whose signature key is Mallory's.
    @Test func aKeyPackageNamingTheDIDWithAnotherKeyIsRefused() async throws {
        try await SyncTestServer.with(.sqlite) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob"), mallory = try await server.person("mallory")
            let malloryKey = try mallory.account.keyStore.deviceIdentity().signingKey
            let (forged, _) = try KeyPackage.create(suite: .x25519Aes128GcmSha256Ed25519, credential: .basic(identity: Array(bob.did.utf8)),
                                                    signaturePrivateKey: Array(malloryKey.rawRepresentation))
            try alice.createBundle(text: "secret plans")
            let doc = try await alice.share()
            let hostile = try await SharedDocument.open(bundleAt: alice.bundlePath, device: alice.device,
                                                        account: alice.account.with(delivery: HostileDeliveryService(
                                                            real: alice.account.delivery,
                                                            behaviour: .swapKeyPackage(did: bob.did, replacement: Data(MLSMessage.keyPackage(forged).tlsBytes)))))
            await #expect(throws: SyncError(.credentialMismatch, "")) { try await hostile.invite([bob.did]) }
            #expect(try await doc.members().members.map(\.did) == [alice.did])
        }
    }

    /// The service hides Alice's commit from Carol and pretends to accept Carol's own: Carol
    /// now lives in a history of her own. Her next message is caught by Alice.
    @Test func aForkedHistoryIsDetected() async throws {
        try await SyncTestServer.with(.sqlite) { server in
            let alice = try await server.person("alice"), carol = try await server.person("carol")
            try alice.createBundle(text: "one history")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([carol.did])
            _ = try await carol.join(aliceDoc.convoId)
            try await aliceDoc.update() // Alice's commit, seen by the real service
            let commitSeq = try await #require(aliceDoc.status().latestSeq)
            let forked = try await SharedDocument.open(bundleAt: carol.bundlePath, device: carol.device,
                                                       account: carol.account.with(delivery: HostileDeliveryService(
                                                           real: carol.account.delivery, behaviour: .fork(hiddenSeq: commitSeq))))
            try await forked.update() // "accepted" by the stand-in only
            try carol.edit { try $0.insert("Carol: ", at: 0) }
            try await forked.push()
            await #expect(throws: SyncError(.forkDetected, "")) { try await aliceDoc.pull() }
            let status = await aliceDoc.status()
            #expect(status.alerts.contains { $0.contains("another history") })
            #expect(try alice.text() == "one history", "nothing of the other history was applied")
        }
    }
}
}
