/// The zone service's tables in the Delivery Service's SQLite database, applied through the
/// server's `schema_migrations` (versions 1001 and up: the zone service's range).
enum ZoneSQLiteSchema {
    static let migrations: [(version: Int, sql: String)] = [
        (1001, """
        CREATE TABLE zones (
            zone_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            owner TEXT NOT NULL,
            convo_id TEXT,
            incarnation TEXT NOT NULL,
            last_change INTEGER NOT NULL,
            purged_through INTEGER NOT NULL,
            records INTEGER NOT NULL,
            bytes INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX zones_by_owner ON zones (owner);
        CREATE TABLE zone_records (
            zone_id TEXT NOT NULL REFERENCES zones (zone_id),
            record_name TEXT NOT NULL,
            record_type TEXT NOT NULL,
            fields TEXT NOT NULL,
            asset_hash TEXT,
            asset_size INTEGER,
            saved_by TEXT,
            change INTEGER NOT NULL,
            saved_at INTEGER NOT NULL,
            deleted INTEGER NOT NULL,
            epoch INTEGER,
            seq INTEGER,
            expires_at INTEGER,
            comment_key_hash TEXT,
            PRIMARY KEY (zone_id, record_name)
        );
        CREATE UNIQUE INDEX zone_records_by_change ON zone_records (zone_id, change);
        CREATE INDEX zone_records_by_seq ON zone_records (zone_id, epoch, seq);
        CREATE INDEX zone_records_by_asset ON zone_records (asset_hash);
        CREATE TABLE zone_uploads (
            zone_id TEXT NOT NULL REFERENCES zones (zone_id),
            hash TEXT NOT NULL,
            size INTEGER NOT NULL,
            uploaded_by TEXT NOT NULL,
            uploaded_at INTEGER NOT NULL,
            PRIMARY KEY (zone_id, hash)
        );
        CREATE INDEX zone_uploads_by_hash ON zone_uploads (hash);
        """),
        // v1.2: inbox write capabilities (SHA-256 hex of each value), one per name (the owner
        // uses one name per document), for senders whose group lives on another server.
        (1002, """
        CREATE TABLE inbox_capabilities (
            zone_id TEXT NOT NULL REFERENCES zones (zone_id),
            name TEXT NOT NULL,
            key_hash TEXT NOT NULL,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (zone_id, name)
        );
        CREATE INDEX inbox_capabilities_by_hash ON inbox_capabilities (zone_id, key_hash);
        """),
        // Inline assets (`assetData`, at most 48 KiB) in the database, content-addressed like
        // the files of `zone-assets/`: written in the transaction of the records that name them,
        // so a record and its bytes are committed together, with no file, rename or flush of
        // their own. Older inline assets stay files; reads look here first.
        (1003, """
        CREATE TABLE zone_inline_blobs (
            hash TEXT PRIMARY KEY,
            bytes BLOB NOT NULL
        );
        """),
    ]
}
