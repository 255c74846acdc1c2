import Foundation
import Crypto
import GRDB
import ImprintEd25519

extension SQLiteKeyStore {
    public func deviceIdentity() throws(KeyStoreError) -> DeviceIdentity {
        // Usually it exists: a read, no write lock. Else create it in a write transaction that
        // checks again, so two processes creating at once end with one identity.
        let existing = try read { db -> DeviceIdentity? in
            guard let did = try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = 'device_identity'") else { return nil }
            return try loadIdentity(db, try parsedDID(did))
        }
        if let existing { return existing }
        return try write { db in
            if let did = try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = 'device_identity'") {
                guard let identity = try loadIdentity(db, try parsedDID(did)) else {
                    throw KeyStoreError(.corrupt, "the device identity \(did) is missing", path: path)
                }
                return identity
            }
            let identity = DeviceIdentity.generate()
            try insertIdentity(db, identity)
            try db.execute(sql: "INSERT INTO settings (key, value) VALUES ('device_identity', ?)", arguments: [identity.did.did])
            return identity
        }
    }

    public func saveIdentity(_ identity: DeviceIdentity) throws(KeyStoreError) {
        try write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM identities WHERE did = ?", arguments: [identity.did.did]) == true { return }
            try insertIdentity(db, identity)
        }
    }

    public func identity(_ did: DIDKey) throws(KeyStoreError) -> DeviceIdentity? {
        try read { db in try loadIdentity(db, did) }
    }

    public func identities() throws(KeyStoreError) -> [DIDKey] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT did FROM identities ORDER BY did").map { try parsedDID($0) }
        }
    }

    public func deleteIdentity(_ did: DIDKey) throws(KeyStoreError) {
        try write { db in
            for table in ["attachment_keys", "snapshot_keys", "epoch_secrets", "processed_cursors", "group_states", "key_package_keys", "signature_keys"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE identity = ?", arguments: [did.did])
            }
            try db.execute(sql: "DELETE FROM identities WHERE did = ?", arguments: [did.did])
            try db.execute(sql: "DELETE FROM settings WHERE key = 'device_identity' AND value = ?", arguments: [did.did])
        }
    }

    // MARK: Signature keys

    public func saveSignatureKey(_ key: SignatureKey, for identity: DIDKey) throws(KeyStoreError) {
        try write { db in
            try requireIdentity(db, identity)
            let sealed = try seal(key.privateKey, identity, "signature_keys", ["\(key.suite)"])
            try db.execute(sql: """
                INSERT INTO signature_keys (identity, suite, public_key, credential, sealed_private_key) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (identity, suite) DO UPDATE SET public_key = excluded.public_key,
                    credential = excluded.credential, sealed_private_key = excluded.sealed_private_key
                """, arguments: [identity.did, Int(key.suite), Data(key.publicKey), Data(key.credential), sealed])
        }
    }

    public func signatureKey(suite: UInt16, for identity: DIDKey) throws(KeyStoreError) -> SignatureKey? {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT public_key, credential, sealed_private_key FROM signature_keys WHERE identity = ? AND suite = ?
                """, arguments: [identity.did, Int(suite)]) else { return nil }
            let privateKey = try open(row["sealed_private_key"], identity, "signature_keys", ["\(suite)"])
            return SignatureKey(suite: suite, publicKey: Array(row["public_key"] as Data),
                                privateKey: privateKey, credential: Array(row["credential"] as Data))
        }
    }

    public func signatureKeys(for identity: DIDKey) throws(KeyStoreError) -> [SignatureKey] {
        let suites = try read { db in
            try Int.fetchAll(db, sql: "SELECT suite FROM signature_keys WHERE identity = ? ORDER BY suite", arguments: [identity.did])
        }
        var keys: [SignatureKey] = []
        for suite in suites {
            guard let suite = UInt16(exactly: suite) else { throw KeyStoreError(.corrupt, "suite \(suite) out of range", path: path) }
            if let key = try signatureKey(suite: suite, for: identity) { keys.append(key) }
        }
        return keys
    }

    // MARK: Helpers

    private func insertIdentity(_ db: Database, _ identity: DeviceIdentity) throws {
        let sealed = try seal(Array(identity.signingKey.rawRepresentation), identity.did, "identities", [])
        try db.execute(sql: "INSERT INTO identities (did, sealed_private_key) VALUES (?, ?)", arguments: [identity.did.did, sealed])
    }

    private func loadIdentity(_ db: Database, _ did: DIDKey) throws -> DeviceIdentity? {
        guard let blob = try Data.fetchOne(db, sql: "SELECT sealed_private_key FROM identities WHERE did = ?", arguments: [did.did]) else {
            return nil
        }
        let raw = try open(blob, did, "identities", [])
        guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw),
              DIDKey(publicKey: key.publicKey) == did else {
            throw KeyStoreError(.corrupt, "the private key of \(did.did) does not match its did", path: path)
        }
        return DeviceIdentity(signingKey: key)
    }

    private func parsedDID(_ text: String) throws -> DIDKey {
        do { return try DIDKey(did: text) } catch { throw KeyStoreError(.corrupt, "stored did \(text.prefix(80)) is not a did:key", path: path) }
    }
}
