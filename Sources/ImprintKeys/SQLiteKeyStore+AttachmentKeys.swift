import Foundation
import GRDB
import ImprintEd25519

extension SQLiteKeyStore {
    // MARK: Shared-attachment content keys

    public func saveAttachmentKey(_ key: [UInt8], asset: String, convo: String, for identity: DIDKey) throws(KeyStoreError) {
        try write { db in
            let convo = try Self.convoArgument(convo)
            let asset = try Self.assetArgument(asset)
            try requireIdentity(db, identity)
            let sealed = try seal(key, identity, "attachment_keys", [convo, asset])
            try db.execute(sql: """
                INSERT INTO attachment_keys (identity, convo, asset, sealed_key) VALUES (?, ?, ?, ?)
                ON CONFLICT (identity, convo, asset) DO UPDATE SET sealed_key = excluded.sealed_key
                """, arguments: [identity.did, convo, asset, sealed])
        }
    }

    public func attachmentKey(asset: String, convo: String, for identity: DIDKey) throws(KeyStoreError) -> [UInt8]? {
        try read { db in
            guard let blob = try Data.fetchOne(db, sql: "SELECT sealed_key FROM attachment_keys WHERE identity = ? AND convo = ? AND asset = ?",
                                               arguments: [identity.did, convo, asset]) else { return nil }
            return try open(blob, identity, "attachment_keys", [convo, asset])
        }
    }

    public func attachmentKeyAssets(convo: String, for identity: DIDKey) throws(KeyStoreError) -> [String] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT asset FROM attachment_keys WHERE identity = ? AND convo = ? ORDER BY asset",
                                arguments: [identity.did, convo])
        }
    }

    static func assetArgument(_ asset: String) throws -> String {
        guard !asset.isEmpty, asset.utf8.count <= 128 else { throw KeyStoreError(.invalidArgument, "an asset id is 1...128 bytes") }
        return asset
    }
}
