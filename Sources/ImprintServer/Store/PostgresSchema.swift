/// Versioned schema of the PostgreSQL store, one statement per entry (the extended protocol
/// runs one statement at a time); recorded in `schema_migrations`.
enum PostgresSchema {
    static let migrations: [(version: Int, statements: [String])] = [
        (1, [
            """
            CREATE TABLE key_packages (
                id TEXT PRIMARY KEY,
                did TEXT NOT NULL,
                cipher_suite BIGINT NOT NULL,
                key_package BYTEA NOT NULL,
                expires_at BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                ordinal BIGSERIAL NOT NULL
            )
            """,
            "CREATE INDEX key_packages_by_did ON key_packages (did, cipher_suite, ordinal)",
            """
            CREATE TABLE convos (
                id TEXT PRIMARY KEY,
                creator TEXT NOT NULL,
                title TEXT,
                cipher_suite BIGINT NOT NULL,
                epoch BIGINT NOT NULL,
                last_seq BIGINT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE members (
                convo_id TEXT NOT NULL REFERENCES convos (id),
                did TEXT NOT NULL,
                joined_at BIGINT NOT NULL,
                active BOOLEAN NOT NULL,
                PRIMARY KEY (convo_id, did)
            )
            """,
            "CREATE INDEX members_by_did ON members (did, active)",
            """
            CREATE TABLE messages (
                convo_id TEXT NOT NULL REFERENCES convos (id),
                seq BIGINT NOT NULL,
                epoch BIGINT NOT NULL,
                sender TEXT NOT NULL,
                message_type TEXT NOT NULL,
                hash TEXT NOT NULL,
                size BIGINT NOT NULL,
                sent_at BIGINT NOT NULL,
                record_name TEXT,
                commit_blob BYTEA,
                PRIMARY KEY (convo_id, seq)
            )
            """,
            """
            CREATE TABLE welcomes (
                convo_id TEXT NOT NULL REFERENCES convos (id),
                did TEXT NOT NULL,
                welcome BYTEA NOT NULL,
                epoch BIGINT NOT NULL,
                PRIMARY KEY (convo_id, did)
            )
            """,
            "CREATE TABLE storage_providers (did TEXT PRIMARY KEY, provider TEXT NOT NULL)",
            """
            CREATE TABLE events (
                id BIGSERIAL PRIMARY KEY,
                recipient TEXT NOT NULL,
                convo_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                payload TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX events_by_recipient ON events (recipient, id)",
        ]),
        (2, [
            "CREATE UNLOGGED TABLE token_replays (key TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
        ]),
    ]
}
