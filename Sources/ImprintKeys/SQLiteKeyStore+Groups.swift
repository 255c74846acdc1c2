import Foundation
import GRDB
import ImprintEd25519
import ImprintEncoding

extension SQLiteKeyStore {
    // MARK: Key-package private keys

    public func saveKeyPackagePrivateKey(_ secret: [UInt8], reference: [UInt8], for identity: DIDKey) throws(KeyStoreError) {
        guard !reference.isEmpty, reference.count <= 64 else { throw KeyStoreError(.invalidArgument, "a key-package reference is 1...64 bytes") }
        try write { db in
            try requireIdentity(db, identity)
            let sealed = try seal(secret, identity, "key_package_keys", [Hex.encode(reference)])
            try db.execute(sql: """
                INSERT INTO key_package_keys (identity, reference, sealed_private_key) VALUES (?, ?, ?)
                ON CONFLICT (identity, reference) DO UPDATE SET sealed_private_key = excluded.sealed_private_key
                """, arguments: [identity.did, Data(reference), sealed])
        }
    }

    public func keyPackagePrivateKey(reference: [UInt8], for identity: DIDKey) throws(KeyStoreError) -> [UInt8]? {
        try read { db in
            guard let blob = try Data.fetchOne(db, sql: "SELECT sealed_private_key FROM key_package_keys WHERE identity = ? AND reference = ?",
                                               arguments: [identity.did, Data(reference)]) else { return nil }
            return try open(blob, identity, "key_package_keys", [Hex.encode(reference)])
        }
    }

    public func keyPackageReferences(for identity: DIDKey) throws(KeyStoreError) -> [[UInt8]] {
        try read { db in
            try Data.fetchAll(db, sql: "SELECT reference FROM key_package_keys WHERE identity = ? ORDER BY reference",
                              arguments: [identity.did]).map { Array($0) }
        }
    }

    @discardableResult
    public func deleteKeyPackagePrivateKey(reference: [UInt8], for identity: DIDKey) throws(KeyStoreError) -> Bool {
        try write { db in
            try db.execute(sql: "DELETE FROM key_package_keys WHERE identity = ? AND reference = ?", arguments: [identity.did, Data(reference)])
            return db.changesCount > 0
        }
    }

    // MARK: Group state and cursor

    public func saveGroupState(_ record: GroupStateRecord, convo: String, for identity: DIDKey) throws(KeyStoreError) {
        try write { db in
            let convo = try Self.convoArgument(convo)
            try requireIdentity(db, identity)
            let sealed = try seal(record.state, identity, "group_states", [convo])
            try db.execute(sql: """
                INSERT INTO group_states (identity, convo, sealed_state) VALUES (?, ?, ?)
                ON CONFLICT (identity, convo) DO UPDATE SET sealed_state = excluded.sealed_state
                """, arguments: [identity.did, convo, sealed])
            try db.execute(sql: """
                INSERT INTO processed_cursors (identity, convo, epoch, seq) VALUES (?, ?, ?, ?)
                ON CONFLICT (identity, convo) DO UPDATE SET epoch = excluded.epoch, seq = excluded.seq
                """, arguments: [identity.did, convo, try Self.epochArgument(record.cursor.epoch), try Self.epochArgument(record.cursor.seq)])
        }
    }

    public func groupState(convo: String, for identity: DIDKey) throws(KeyStoreError) -> GroupStateRecord? {
        try read { db in
            guard let blob = try Data.fetchOne(db, sql: "SELECT sealed_state FROM group_states WHERE identity = ? AND convo = ?",
                                               arguments: [identity.did, convo]) else { return nil }
            guard let row = try Row.fetchOne(db, sql: "SELECT epoch, seq FROM processed_cursors WHERE identity = ? AND convo = ?",
                                             arguments: [identity.did, convo]) else {
                throw KeyStoreError(.corrupt, "convo \(convo) has a group state but no cursor", path: path)
            }
            let epoch: Int64 = row["epoch"], seq: Int64 = row["seq"]
            guard epoch >= 0, seq >= 0 else { throw KeyStoreError(.corrupt, "negative cursor for convo \(convo)", path: path) }
            return GroupStateRecord(state: try open(blob, identity, "group_states", [convo]),
                                    cursor: ProcessedCursor(epoch: UInt64(epoch), seq: UInt64(seq)))
        }
    }

    public func convos(for identity: DIDKey) throws(KeyStoreError) -> [String] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT convo FROM group_states WHERE identity = ? ORDER BY convo", arguments: [identity.did])
        }
    }

    public func deleteGroup(convo: String, for identity: DIDKey) throws(KeyStoreError) {
        try write { db in
            for table in ["group_states", "processed_cursors", "epoch_secrets", "attachment_keys"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE identity = ? AND convo = ?", arguments: [identity.did, convo])
            }
        }
    }

    // MARK: Epoch secrets

    public func saveEpochSecret(_ secret: [UInt8], convo: String, epoch: UInt64, for identity: DIDKey) throws(KeyStoreError) {
        try write { db in
            let convo = try Self.convoArgument(convo)
            try requireIdentity(db, identity)
            let sealed = try seal(secret, identity, "epoch_secrets", [convo, "\(epoch)"])
            try db.execute(sql: """
                INSERT INTO epoch_secrets (identity, convo, epoch, sealed_secret) VALUES (?, ?, ?, ?)
                ON CONFLICT (identity, convo, epoch) DO UPDATE SET sealed_secret = excluded.sealed_secret
                """, arguments: [identity.did, convo, try Self.epochArgument(epoch), sealed])
        }
    }

    public func epochSecret(convo: String, epoch: UInt64, for identity: DIDKey) throws(KeyStoreError) -> [UInt8]? {
        try read { db in
            guard let blob = try Data.fetchOne(db, sql: "SELECT sealed_secret FROM epoch_secrets WHERE identity = ? AND convo = ? AND epoch = ?",
                                               arguments: [identity.did, convo, try Self.epochArgument(epoch)]) else { return nil }
            return try open(blob, identity, "epoch_secrets", [convo, "\(epoch)"])
        }
    }

    @discardableResult
    public func deleteEpochSecrets(convo: String, before epoch: UInt64, for identity: DIDKey) throws(KeyStoreError) -> Int {
        try write { db in
            try db.execute(sql: "DELETE FROM epoch_secrets WHERE identity = ? AND convo = ? AND epoch < ?",
                           arguments: [identity.did, convo, Int64(clamping: epoch)])
            return db.changesCount
        }
    }
}
