/// The zone service's tables in the Delivery Service's PostgreSQL database, applied through the
/// server's `schema_migrations` (versions 1001 and up: the zone service's range). Blobs are
/// stored in 256 KiB `bytea` chunks so that every instance serves every asset; a read moves
/// one chunk per statement, an upload `chunksPerStatement` (1 MiB).
enum ZonePostgresSchema {
    static let migrations: [(version: Int, statements: [String])] = [
        (1001, [
            """
            CREATE TABLE zones (
                zone_id TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                owner TEXT NOT NULL,
                convo_id TEXT,
                incarnation TEXT NOT NULL,
                last_change BIGINT NOT NULL,
                purged_through BIGINT NOT NULL,
                records BIGINT NOT NULL,
                bytes BIGINT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX zones_by_owner ON zones (owner)",
            """
            CREATE TABLE zone_records (
                zone_id TEXT NOT NULL REFERENCES zones (zone_id),
                record_name TEXT NOT NULL,
                record_type TEXT NOT NULL,
                fields TEXT NOT NULL,
                asset_hash TEXT,
                asset_size BIGINT,
                saved_by TEXT,
                change BIGINT NOT NULL,
                saved_at BIGINT NOT NULL,
                deleted BOOLEAN NOT NULL,
                epoch BIGINT,
                seq BIGINT,
                expires_at BIGINT,
                comment_key_hash TEXT,
                PRIMARY KEY (zone_id, record_name)
            )
            """,
            "CREATE UNIQUE INDEX zone_records_by_change ON zone_records (zone_id, change)",
            "CREATE INDEX zone_records_by_seq ON zone_records (zone_id, epoch, seq)",
            "CREATE INDEX zone_records_by_asset ON zone_records (asset_hash)",
            """
            CREATE TABLE zone_uploads (
                zone_id TEXT NOT NULL REFERENCES zones (zone_id),
                hash TEXT NOT NULL,
                size BIGINT NOT NULL,
                uploaded_by TEXT NOT NULL,
                uploaded_at BIGINT NOT NULL,
                PRIMARY KEY (zone_id, hash)
            )
            """,
            "CREATE INDEX zone_uploads_by_hash ON zone_uploads (hash)",
            "CREATE TABLE zone_blobs (hash TEXT PRIMARY KEY, size BIGINT NOT NULL)",
            """
            CREATE TABLE zone_blob_chunks (
                hash TEXT NOT NULL,
                idx INTEGER NOT NULL,
                bytes BYTEA NOT NULL,
                PRIMARY KEY (hash, idx)
            )
            """,
        ]),
        // v1.2: inbox write capabilities (SQLite's 1002).
        (1002, [
            """
            CREATE TABLE inbox_capabilities (
                zone_id TEXT NOT NULL REFERENCES zones (zone_id),
                name TEXT NOT NULL,
                key_hash TEXT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (zone_id, name)
            )
            """,
            "CREATE INDEX inbox_capabilities_by_hash ON inbox_capabilities (zone_id, key_hash)",
        ]),
    ]

    static let chunkSize = 256 << 10
    /// Chunk rows one `INSERT` of an upload carries (1 MiB of bytes per round trip).
    static let chunksPerStatement = 4
    /// Advisory-lock namespaces (first key of `pg_advisory_xact_lock(int4, int4)`).
    static let blobLockSpace: Int32 = 0x494D_5A42  // "IMZB": (space, hashtext(hash)) per blob
    static let ownerLockSpace: Int32 = 0x494D_5A4F  // "IMZO": (space, hashtext(owner)) per quota owner
}
