import Foundation
import GRDB
import ImprintEd25519

extension SQLiteKeyStore {
    // MARK: Reviewer-snapshot comment keys

    public func saveSnapshotKey(_ privateKey: [UInt8], snapshot: String, for identity: DIDKey) throws(KeyStoreError) {
        try write { db in
            let snapshot = try Self.snapshotArgument(snapshot)
            try requireIdentity(db, identity)
            let sealed = try seal(privateKey, identity, "snapshot_keys", [snapshot])
            try db.execute(sql: """
                INSERT INTO snapshot_keys (identity, snapshot, sealed_private_key) VALUES (?, ?, ?)
                ON CONFLICT (identity, snapshot) DO UPDATE SET sealed_private_key = excluded.sealed_private_key
                """, arguments: [identity.did, snapshot, sealed])
        }
    }

    public func snapshotKey(snapshot: String, for identity: DIDKey) throws(KeyStoreError) -> [UInt8]? {
        try read { db in
            guard let blob = try Data.fetchOne(db, sql: "SELECT sealed_private_key FROM snapshot_keys WHERE identity = ? AND snapshot = ?",
                                               arguments: [identity.did, snapshot]) else { return nil }
            return try open(blob, identity, "snapshot_keys", [snapshot])
        }
    }

    public func snapshotKeyNames(for identity: DIDKey) throws(KeyStoreError) -> [String] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT snapshot FROM snapshot_keys WHERE identity = ? ORDER BY snapshot", arguments: [identity.did])
        }
    }

    @discardableResult
    public func deleteSnapshotKey(snapshot: String, for identity: DIDKey) throws(KeyStoreError) -> Bool {
        try write { db in
            try db.execute(sql: "DELETE FROM snapshot_keys WHERE identity = ? AND snapshot = ?", arguments: [identity.did, snapshot])
            return db.changesCount > 0
        }
    }

    static func snapshotArgument(_ snapshot: String) throws -> String {
        guard !snapshot.isEmpty, snapshot.utf8.count <= 128 else { throw KeyStoreError(.invalidArgument, "a snapshot id is 1...128 bytes") }
        return snapshot
    }
}
