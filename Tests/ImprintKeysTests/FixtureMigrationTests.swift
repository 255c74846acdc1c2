import Foundation
import ImprintEd25519
import ImprintKeys
import ImprintTestSupport
import Testing

/// `Fixtures/keystore-v1.sqlite` was written once by `imprint-keys-testhelper make-fixture`
/// with schema v1 (passphrase "imprint fixture", test scrypt parameters). Every later build
/// must open it, migrate it forward and read the same values.
@Suite struct FixtureMigrationTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/keystore-v1.sqlite").path

    func copyOfFixture() throws -> (TemporaryDirectory, String) {
        let dir = TemporaryDirectory("keys-fixture")
        let path = dir.file("keys.sqlite")
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: path)
        return (dir, path)
    }

    @Test func theV1SampleStoreOpensAndReads() throws {
        let (dir, path) = try copyOfFixture()
        defer { _ = dir }
        let store = try SQLiteKeyStore(path: path, unlock: .passphrase("imprint fixture", parameters: .owasp))
        let expected = DeviceIdentity(signingKey: try .init(rawRepresentation: (1...32).map { UInt8($0) }))
        let me = expected.did
        #expect(try store.identities() == [me])
        #expect(try store.identity(me)?.signingKey.rawRepresentation == expected.signingKey.rawRepresentation)
        #expect(try store.signatureKey(suite: 1, for: me) == SignatureKey(suite: 1, publicKey: [UInt8](repeating: 2, count: 32),
                                                                            privateKey: [UInt8](repeating: 3, count: 32),
                                                                            credential: Array("fixture".utf8)))
        #expect(try store.keyPackagePrivateKey(reference: [UInt8](repeating: 0xAB, count: 32), for: me) == Array("kp secret".utf8))
        #expect(try store.groupState(convo: "fixture-convo", for: me)
                == GroupStateRecord(state: Array("fixture group state v1".utf8), cursor: ProcessedCursor(epoch: 7, seq: 42)))
        #expect(try store.epochSecret(convo: "fixture-convo", epoch: 7, for: me) == [UInt8](repeating: 7, count: 32))
        // Still writable after opening.
        try store.saveEpochSecret([8], convo: "fixture-convo", epoch: 8, for: me)
        #expect(try store.deleteEpochSecrets(convo: "fixture-convo", before: 8, for: me) == 1)
        // Migrated to v2: the snapshot-key table exists.
        try store.saveSnapshotKey([5], snapshot: "review", for: me)
        #expect(try store.snapshotKey(snapshot: "review", for: me) == [5])
        // Migrated to v3: the attachment-key table exists.
        try store.saveAttachmentKey([6], asset: "figure", convo: "fixture-convo", for: me)
        #expect(try store.attachmentKey(asset: "figure", convo: "fixture-convo", for: me) == [6])
    }

    @Test func theSampleStoreRefusesAWrongPassphrase() throws {
        let (dir, path) = try copyOfFixture()
        defer { _ = dir }
        #expect(throws: KeyStoreError.wrongPassphrase) { try SQLiteKeyStore(path: path, unlock: .passphrase("imprint fixturE")) }
        #expect(FileManager.default.contentsEqual(atPath: path, andPath: Self.fixture))
    }
}
