import Foundation
import ImprintEd25519
import ImprintKeys
import ImprintTestSupport
import Testing

/// Behaviour every `KeyStore` backend must show; each test runs once per `KeyStoreKind`.
@Suite struct KeyStoreConformanceTests {
    @Test(arguments: KeyStoreKind.allCases)
    func deviceIdentityIsCreatedOnceAndSurvivesReopening(kind: KeyStoreKind) throws {
        let dir = TemporaryDirectory("keys")
        let store = try kind.makeStore(in: dir)
        let first = try store.deviceIdentity()
        #expect(try store.deviceIdentity().did == first.did)
        #expect(first.did.did.hasPrefix("did:key:z6Mk"))
        let again = try kind.reopen(store, in: dir)
        let reloaded = try again.deviceIdentity()
        #expect(reloaded.did == first.did)
        #expect(reloaded.signingKey.rawRepresentation == first.signingKey.rawRepresentation)
        let message = Array("token".utf8)
        #expect(first.did.publicKey.isValidSignature(try reloaded.signingKey.signature(for: message), for: message))
        #expect(try again.identities() == [first.did])
    }

    @Test(arguments: KeyStoreKind.allCases)
    func everyTableRoundTripsAndSurvivesReopening(kind: KeyStoreKind) throws {
        let seed = testSeed("KeyStoreConformanceTests.roundTrip.\(kind)", fallback: 0x6B65_7973)
        var rng = SplitMix64(seed: seed)
        let dir = TemporaryDirectory("keys")
        let (store, me) = try kind.makeStoreWithIdentity(in: dir)
        let signature = SignatureKey(suite: 1, publicKey: randomBytes(32, &rng), privateKey: randomBytes(32, &rng), credential: Array("alice".utf8))
        let reference = randomBytes(32, &rng), keyPackageSecret = randomBytes(64, &rng)
        let state = randomBytes(20_000, &rng), epochSecret = randomBytes(32, &rng)
        try store.saveSignatureKey(signature, for: me)
        try store.saveKeyPackagePrivateKey(keyPackageSecret, reference: reference, for: me)
        try store.saveGroupState(GroupStateRecord(state: state, cursor: ProcessedCursor(epoch: 3, seq: 41)), convo: "convo-1", for: me)
        try store.saveEpochSecret(epochSecret, convo: "convo-1", epoch: 3, for: me)
        let snapshotKey = randomBytes(32, &rng)
        try store.saveSnapshotKey(snapshotKey, snapshot: "snap-1", for: me)
        let attachmentKey = randomBytes(32, &rng)
        try store.saveAttachmentKey(attachmentKey, asset: "ab12", convo: "convo-1", for: me)

        for reader in [store, try kind.reopen(store, in: dir)] {
            #expect(try reader.signatureKey(suite: 1, for: me) == signature, "seed \(seed)")
            #expect(try reader.signatureKey(suite: 2, for: me) == nil)
            #expect(try reader.keyPackagePrivateKey(reference: reference, for: me) == keyPackageSecret)
            #expect(try reader.signatureKeys(for: me) == [signature])
            #expect(try reader.keyPackageReferences(for: me) == [reference])
            #expect(try reader.groupState(convo: "convo-1", for: me) == GroupStateRecord(state: state, cursor: ProcessedCursor(epoch: 3, seq: 41)))
            #expect(try reader.groupState(convo: "convo-2", for: me) == nil)
            #expect(try reader.convos(for: me) == ["convo-1"])
            #expect(try reader.epochSecret(convo: "convo-1", epoch: 3, for: me) == epochSecret)
            #expect(try reader.epochSecret(convo: "convo-1", epoch: 2, for: me) == nil)
            #expect(try reader.snapshotKey(snapshot: "snap-1", for: me) == snapshotKey)
            #expect(try reader.snapshotKey(snapshot: "snap-2", for: me) == nil)
            #expect(try reader.snapshotKeyNames(for: me) == ["snap-1"])
            #expect(try reader.attachmentKey(asset: "ab12", convo: "convo-1", for: me) == attachmentKey)
            #expect(try reader.attachmentKey(asset: "ab12", convo: "convo-2", for: me) == nil)
            #expect(try reader.attachmentKeyAssets(convo: "convo-1", for: me) == ["ab12"])
        }
    }

    @Test(arguments: KeyStoreKind.allCases)
    func deletesRemoveExactlyWhatTheyName(kind: KeyStoreKind) throws {
        let dir = TemporaryDirectory("keys")
        let (store, me) = try kind.makeStoreWithIdentity(in: dir)
        for epoch: UInt64 in 1...5 { try store.saveEpochSecret([UInt8(epoch)], convo: "a", epoch: epoch, for: me) }
        try store.saveEpochSecret([9], convo: "b", epoch: 1, for: me)
        #expect(try store.deleteEpochSecrets(convo: "a", before: 4, for: me) == 3)
        #expect(try store.epochSecret(convo: "a", epoch: 3, for: me) == nil)
        #expect(try store.epochSecret(convo: "a", epoch: 4, for: me) == [4])
        #expect(try store.epochSecret(convo: "b", epoch: 1, for: me) == [9])

        try store.saveKeyPackagePrivateKey([1, 2, 3], reference: [0xAA], for: me)
        try store.saveKeyPackagePrivateKey([4], reference: [0x0B], for: me)
        #expect(try store.keyPackageReferences(for: me) == [[0x0B], [0xAA]])
        #expect(try store.deleteKeyPackagePrivateKey(reference: [0xAA], for: me))
        #expect(try !store.deleteKeyPackagePrivateKey(reference: [0xAA], for: me))
        #expect(try store.keyPackagePrivateKey(reference: [0xAA], for: me) == nil)
        #expect(try store.keyPackageReferences(for: me) == [[0x0B]])

        try store.saveGroupState(GroupStateRecord(state: [1], cursor: .start), convo: "a", for: me)
        try store.saveAttachmentKey([7], asset: "f00d", convo: "a", for: me)
        try store.saveAttachmentKey([8], asset: "f00d", convo: "b", for: me)
        try store.saveAttachmentKey([6], asset: "beef", convo: "a", for: me)
        try store.saveAttachmentKey([5], asset: "beef", convo: "a", for: me)  // replaces
        #expect(try store.attachmentKey(asset: "beef", convo: "a", for: me) == [5])
        #expect(try store.attachmentKeyAssets(convo: "a", for: me) == ["beef", "f00d"])
        #expect(throws: KeyStoreError.self) { try store.saveAttachmentKey([1], asset: "", convo: "a", for: me) }
        try store.deleteGroup(convo: "a", for: me)
        #expect(try store.attachmentKeyAssets(convo: "a", for: me).isEmpty)
        #expect(try store.attachmentKey(asset: "f00d", convo: "b", for: me) == [8])
        #expect(try store.groupState(convo: "a", for: me) == nil)
        #expect(try store.epochSecret(convo: "a", epoch: 4, for: me) == nil)
        #expect(try store.epochSecret(convo: "b", epoch: 1, for: me) == [9])
        #expect(try store.convos(for: me).isEmpty)

        try store.saveSnapshotKey([1], snapshot: "s1", for: me)
        try store.saveSnapshotKey([2], snapshot: "s2", for: me)
        try store.saveSnapshotKey([3], snapshot: "s1", for: me)  // replaces
        #expect(try store.snapshotKey(snapshot: "s1", for: me) == [3])
        #expect(try store.deleteSnapshotKey(snapshot: "s1", for: me))
        #expect(try !store.deleteSnapshotKey(snapshot: "s1", for: me))
        #expect(try store.snapshotKeyNames(for: me) == ["s2"])
        #expect(throws: KeyStoreError.self) { try store.saveSnapshotKey([1], snapshot: "", for: me) }
    }

    @Test(arguments: KeyStoreKind.allCases)
    func identitiesNeverSeeEachOthersKeys(kind: KeyStoreKind) throws {
        let dir = TemporaryDirectory("keys")
        let (store, alice) = try kind.makeStoreWithIdentity(in: dir)
        let bobIdentity = DeviceIdentity.generate()
        try store.saveIdentity(bobIdentity)
        let bob = bobIdentity.did
        #expect(Set(try store.identities()) == [alice, bob])

        // The same names under both identities.
        try store.saveGroupState(GroupStateRecord(state: [0xA1], cursor: ProcessedCursor(epoch: 1, seq: 1)), convo: "shared", for: alice)
        try store.saveEpochSecret([0xA2], convo: "shared", epoch: 1, for: alice)
        try store.saveKeyPackagePrivateKey([0xA3], reference: [7], for: alice)
        try store.saveSignatureKey(SignatureKey(suite: 1, publicKey: [1], privateKey: [0xA4], credential: [1]), for: alice)
        #expect(try store.groupState(convo: "shared", for: bob) == nil)
        #expect(try store.epochSecret(convo: "shared", epoch: 1, for: bob) == nil)
        #expect(try store.keyPackagePrivateKey(reference: [7], for: bob) == nil)
        #expect(try store.signatureKey(suite: 1, for: bob) == nil)
        #expect(try store.signatureKeys(for: bob).isEmpty)
        #expect(try store.keyPackageReferences(for: bob).isEmpty)
        #expect(try store.convos(for: bob).isEmpty)

        try store.saveGroupState(GroupStateRecord(state: [0xB1], cursor: ProcessedCursor(epoch: 9, seq: 9)), convo: "shared", for: bob)
        try store.saveEpochSecret([0xB2], convo: "shared", epoch: 1, for: bob)
        #expect(try store.groupState(convo: "shared", for: alice)?.state == [0xA1])
        #expect(try store.epochSecret(convo: "shared", epoch: 1, for: alice) == [0xA2])

        // Bob's deletes leave Alice's rows alone.
        try store.deleteGroup(convo: "shared", for: bob)
        #expect(try !store.deleteKeyPackagePrivateKey(reference: [7], for: bob))
        #expect(try store.groupState(convo: "shared", for: alice)?.state == [0xA1])
        #expect(try store.epochSecret(convo: "shared", epoch: 1, for: alice) == [0xA2])
        #expect(try store.keyPackagePrivateKey(reference: [7], for: alice) == [0xA3])

        // Deleting an identity takes everything of it, and only of it.
        try store.deleteIdentity(alice)
        #expect(try store.identities() == [bob])
        #expect(try store.identity(alice) == nil)
        #expect(try store.groupState(convo: "shared", for: alice) == nil)
        #expect(try store.identity(bob)?.did == bob)
    }

    @Test(arguments: KeyStoreKind.allCases)
    func writesForAnUnknownIdentityOrWithBadArgumentsAreRefused(kind: KeyStoreKind) throws {
        let dir = TemporaryDirectory("keys")
        let (store, me) = try kind.makeStoreWithIdentity(in: dir)
        let stranger = DeviceIdentity.generate().did
        #expect(throws: KeyStoreError.unknownIdentity) {
            try store.saveGroupState(GroupStateRecord(state: [1], cursor: .start), convo: "c", for: stranger)
        }
        #expect(throws: KeyStoreError.unknownIdentity) { try store.saveEpochSecret([1], convo: "c", epoch: 1, for: stranger) }
        #expect(throws: KeyStoreError.invalidArgument) { try store.saveGroupState(GroupStateRecord(state: [1], cursor: .start), convo: "", for: me) }
        #expect(throws: KeyStoreError.invalidArgument) { try store.saveEpochSecret([1], convo: "c", epoch: .max, for: me) }
        #expect(throws: KeyStoreError.invalidArgument) { try store.saveKeyPackagePrivateKey([1], reference: [], for: me) }
    }

    @Test(arguments: KeyStoreKind.allCases)
    func groupStateAndCursorAreReplacedTogether(kind: KeyStoreKind) throws {
        let dir = TemporaryDirectory("keys")
        let (store, me) = try kind.makeStoreWithIdentity(in: dir)
        for n: UInt64 in 1...20 {
            try store.saveGroupState(GroupStateRecord(state: Array(repeating: UInt8(n), count: Int(n) * 300), cursor: ProcessedCursor(epoch: n / 4, seq: n)),
                                     convo: "c", for: me)
        }
        let record = try #require(try store.groupState(convo: "c", for: me))
        #expect(record.cursor == ProcessedCursor(epoch: 5, seq: 20))
        #expect(record.state == Array(repeating: 20, count: 6_000))
    }
}
