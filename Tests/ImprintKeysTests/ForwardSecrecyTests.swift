import Foundation
import GRDB
import ImprintKeys
import ImprintTestSupport
import Testing

/// A deleted secret must not be found in any byte of the store's files: neither the secret
/// itself nor the sealed blob that held it. The test plants known secrets, records their
/// sealed blobs straight from the database, deletes them and scans every file in the store's
/// directory (database, journal, anything else SQLite left) for both.
@Suite struct ForwardSecrecyTests {
    /// Every file next to the store (the database, `-journal`, `-wal`, `-shm` if any).
    func storeFiles(_ dir: TemporaryDirectory) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) where name.hasPrefix("keys.sqlite") {
            files[name] = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file(name))))
        }
        return files
    }

    /// The files holding any 32-byte piece of `needle` (pieces start every 16 bytes). A blob
    /// longer than a page is split across overflow pages, so whole-blob matching would miss
    /// it; any surviving piece of a random 32+ byte secret counts as found.
    func occurs(_ needle: [UInt8], in files: [String: [UInt8]]) -> [String] {
        files.compactMap { name, bytes in ByteIndex(bytes).containsPiece(of: needle) ? name : nil }.sorted()
    }

    /// Positions of every 8-byte prefix in a file, for fast piece lookups.
    struct ByteIndex {
        let bytes: [UInt8]
        var starts: [UInt64: [Int]] = [:]

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            guard bytes.count >= 8 else { return }
            for i in 0...(bytes.count - 8) { starts[Self.key(bytes, i), default: []].append(i) }
        }

        static func key(_ b: [UInt8], _ i: Int) -> UInt64 {
            var v: UInt64 = 0
            for k in 0..<8 { v = v << 8 | UInt64(b[i + k]) }
            return v
        }

        func containsPiece(of needle: [UInt8]) -> Bool {
            let piece = min(32, needle.count)
            guard piece >= 8 else { return false }
            var offset = 0
            while offset + piece <= needle.count {
                for start in starts[Self.key(needle, offset)] ?? [] where start + piece <= bytes.count {
                    if bytes[start..<start + piece].elementsEqual(needle[offset..<offset + piece]) { return true }
                }
                offset += 16
            }
            return false
        }
    }

    /// The sealed blob a column holds, read from the raw database.
    func sealedBlob(_ dir: TemporaryDirectory, _ sql: String) throws -> [UInt8] {
        let queue = try DatabaseQueue(path: dir.file("keys.sqlite"))
        let blob = try queue.read { try Data.fetchOne($0, sql: sql) }
        return [UInt8](try #require(blob))
    }

    @Test(arguments: KeyStoreKind.onDisk)
    func deletedSecretsLeaveNoTraceInTheFiles(kind: KeyStoreKind) throws {
        let seed = testSeed("ForwardSecrecyTests.\(kind)", fallback: 0xF5EC_2E75)
        var rng = SplitMix64(seed: seed)
        let dir = TemporaryDirectory("keys-fs")
        let (store, me) = try kind.makeStoreWithIdentity(in: dir)

        // Neighbours that stay, so deleted cells sit on pages that live on.
        for epoch: UInt64 in 0..<40 { try store.saveEpochSecret(randomBytes(48, &rng), convo: "keep", epoch: epoch, for: me) }
        let keyPackageSecret = randomBytes(64, &rng), reference = randomBytes(32, &rng)
        let oldEpochSecrets = (0..<3).map { _ in randomBytes(48, &rng) }
        let oldState = randomBytes(9_000, &rng) // spans overflow pages
        try store.saveKeyPackagePrivateKey(keyPackageSecret, reference: reference, for: me)
        for (epoch, secret) in oldEpochSecrets.enumerated() { try store.saveEpochSecret(secret, convo: "c", epoch: UInt64(epoch), for: me) }
        try store.saveGroupState(GroupStateRecord(state: oldState, cursor: ProcessedCursor(epoch: 2, seq: 1)), convo: "c", for: me)
        let commentKey = randomBytes(32, &rng)
        try store.saveSnapshotKey(commentKey, snapshot: "revoked", for: me)

        let blobs = [
            try sealedBlob(dir, "SELECT sealed_private_key FROM key_package_keys"),
            try sealedBlob(dir, "SELECT sealed_private_key FROM snapshot_keys"),
            try sealedBlob(dir, "SELECT sealed_state FROM group_states"),
        ] + (try (0..<3).map { epoch in try sealedBlob(dir, "SELECT sealed_secret FROM epoch_secrets WHERE convo = 'c' AND epoch = \(epoch)") })
        let plaintexts = [keyPackageSecret, commentKey, oldState] + oldEpochSecrets

        // Before deleting: the sealed blobs are on disk (the scan works), the plaintexts never.
        let before = try storeFiles(dir)
        for blob in blobs { #expect(!occurs(blob, in: before).isEmpty, "seed \(seed)") }
        for secret in plaintexts { #expect(occurs(secret, in: before).isEmpty, "plaintext on disk, seed \(seed)") }

        // Consume the key package, move past the epochs, replace the group state.
        #expect(try store.deleteKeyPackagePrivateKey(reference: reference, for: me))
        #expect(try store.deleteSnapshotKey(snapshot: "revoked", for: me))
        #expect(try store.deleteEpochSecrets(convo: "c", before: 3, for: me) == 3)
        try store.saveGroupState(GroupStateRecord(state: randomBytes(9_000, &rng), cursor: ProcessedCursor(epoch: 3, seq: 1)), convo: "c", for: me)

        let after = try storeFiles(dir)
        #expect(after.keys.contains("keys.sqlite"))
        for (index, blob) in blobs.enumerated() {
            #expect(occurs(blob, in: after).isEmpty, "sealed blob \(index) still in \(occurs(blob, in: after)), seed \(seed)")
        }
        for (index, secret) in plaintexts.enumerated() {
            #expect(occurs(secret, in: after).isEmpty, "secret \(index) in \(occurs(secret, in: after)), seed \(seed)")
        }
        // What was kept is still readable.
        #expect(try store.epochSecret(convo: "keep", epoch: 39, for: me) != nil)
    }

    @Test(arguments: KeyStoreKind.onDisk)
    func aDeletedGroupLeavesNoTrace(kind: KeyStoreKind) throws {
        let seed = testSeed("ForwardSecrecyTests.group.\(kind)", fallback: 0x6_2009)
        var rng = SplitMix64(seed: seed)
        let dir = TemporaryDirectory("keys-fs")
        let (store, me) = try kind.makeStoreWithIdentity(in: dir)
        try store.saveGroupState(GroupStateRecord(state: randomBytes(300, &rng), cursor: .start), convo: "stays", for: me)
        try store.saveGroupState(GroupStateRecord(state: randomBytes(3_000, &rng), cursor: .start), convo: "left", for: me)
        try store.saveEpochSecret(randomBytes(32, &rng), convo: "left", epoch: 1, for: me)
        try store.saveAttachmentKey(randomBytes(32, &rng), asset: "figure", convo: "left", for: me)
        let blobs = [try sealedBlob(dir, "SELECT sealed_state FROM group_states WHERE convo = 'left'"),
                     try sealedBlob(dir, "SELECT sealed_secret FROM epoch_secrets WHERE convo = 'left'"),
                     try sealedBlob(dir, "SELECT sealed_key FROM attachment_keys WHERE convo = 'left'")]
        try store.deleteGroup(convo: "left", for: me)
        let after = try storeFiles(dir)
        for blob in blobs { #expect(occurs(blob, in: after).isEmpty, "seed \(seed)") }
        #expect(try store.groupState(convo: "stays", for: me) != nil)
    }
}
