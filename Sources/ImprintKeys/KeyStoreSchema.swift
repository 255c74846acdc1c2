import GRDB

/// The SQLite key store's schema, as numbered GRDB migrations (recorded in
/// `grdb_migrations`). A store opens only if every migration it has applied is known to this
/// build; older stores are migrated forward on open (after the unlock check, so a wrong
/// passphrase changes nothing). `Tests/ImprintKeysTests/Fixtures/` keeps a v1 store.
///
/// Secrets live only in `sealed_*` columns; everything else (dids, convo ids, epochs,
/// cursors, public keys, key-package references) is not secret and stays in the clear so that
/// rows can be found and deleted without unsealing anything.
enum KeyStoreSchema {
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE master_key (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    source TEXT NOT NULL CHECK (source IN ('passphrase', 'keyFile')),
                    scrypt_salt BLOB,
                    scrypt_n INTEGER,
                    scrypt_r INTEGER,
                    scrypt_p INTEGER,
                    wrapped_key BLOB NOT NULL
                );
                CREATE TABLE settings (
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                CREATE TABLE identities (
                    did TEXT PRIMARY KEY,
                    sealed_private_key BLOB NOT NULL
                );
                CREATE TABLE signature_keys (
                    identity TEXT NOT NULL REFERENCES identities(did),
                    suite INTEGER NOT NULL,
                    public_key BLOB NOT NULL,
                    credential BLOB NOT NULL,
                    sealed_private_key BLOB NOT NULL,
                    PRIMARY KEY (identity, suite)
                );
                CREATE TABLE key_package_keys (
                    identity TEXT NOT NULL REFERENCES identities(did),
                    reference BLOB NOT NULL,
                    sealed_private_key BLOB NOT NULL,
                    PRIMARY KEY (identity, reference)
                );
                CREATE TABLE group_states (
                    identity TEXT NOT NULL REFERENCES identities(did),
                    convo TEXT NOT NULL,
                    sealed_state BLOB NOT NULL,
                    PRIMARY KEY (identity, convo)
                );
                CREATE TABLE processed_cursors (
                    identity TEXT NOT NULL REFERENCES identities(did),
                    convo TEXT NOT NULL,
                    epoch INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (identity, convo)
                );
                CREATE TABLE epoch_secrets (
                    identity TEXT NOT NULL REFERENCES identities(did),
                    convo TEXT NOT NULL,
                    epoch INTEGER NOT NULL,
                    sealed_secret BLOB NOT NULL,
                    PRIMARY KEY (identity, convo, epoch)
                );
                """)
        }
        // v2: reviewer snapshots' comment keys (docs/reviewer-snapshots.md).
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
                CREATE TABLE snapshot_keys (
                    identity TEXT NOT NULL REFERENCES identities(did),
                    snapshot TEXT NOT NULL,
                    sealed_private_key BLOB NOT NULL,
                    PRIMARY KEY (identity, snapshot)
                );
                """)
        }
        // v3: content keys of attachments shared through a convo (docs/sync.md, "Assets").
        migrator.registerMigration("v3") { db in
            try db.execute(sql: """
                CREATE TABLE attachment_keys (
                    identity TEXT NOT NULL REFERENCES identities(did),
                    convo TEXT NOT NULL,
                    asset TEXT NOT NULL,
                    sealed_key BLOB NOT NULL,
                    PRIMARY KEY (identity, convo, asset)
                );
                """)
        }
        return migrator
    }()
}
