/// Versioned schema of the SQLite store; applied in order, recorded in `schema_migrations`.
enum SQLiteSchema {
    static let migrations: [(version: Int, sql: String)] = [
        (1, """
        CREATE TABLE key_packages (
            id TEXT PRIMARY KEY,
            did TEXT NOT NULL,
            cipher_suite INTEGER NOT NULL,
            key_package BLOB NOT NULL,
            expires_at INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            ordinal INTEGER NOT NULL
        );
        CREATE INDEX key_packages_by_did ON key_packages (did, cipher_suite, ordinal);
        CREATE TABLE convos (
            id TEXT PRIMARY KEY,
            creator TEXT NOT NULL,
            title TEXT,
            cipher_suite INTEGER NOT NULL,
            epoch INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE members (
            convo_id TEXT NOT NULL REFERENCES convos (id),
            did TEXT NOT NULL,
            joined_at INTEGER NOT NULL,
            active INTEGER NOT NULL,
            PRIMARY KEY (convo_id, did)
        );
        CREATE INDEX members_by_did ON members (did, active);
        CREATE TABLE messages (
            convo_id TEXT NOT NULL REFERENCES convos (id),
            seq INTEGER NOT NULL,
            epoch INTEGER NOT NULL,
            sender TEXT NOT NULL,
            message_type TEXT NOT NULL,
            hash TEXT NOT NULL,
            size INTEGER NOT NULL,
            sent_at INTEGER NOT NULL,
            record_name TEXT,
            commit_blob BLOB,
            PRIMARY KEY (convo_id, seq)
        );
        CREATE TABLE welcomes (
            convo_id TEXT NOT NULL REFERENCES convos (id),
            did TEXT NOT NULL,
            welcome BLOB NOT NULL,
            epoch INTEGER NOT NULL,
            PRIMARY KEY (convo_id, did)
        );
        CREATE TABLE storage_providers (
            did TEXT PRIMARY KEY,
            provider TEXT NOT NULL
        );
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            recipient TEXT NOT NULL,
            convo_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX events_by_recipient ON events (recipient, id);
        """),
        // v1.1: `sendMessage`'s idempotency key, unique per (convo, sender); NULLs stay distinct.
        (2, """
        ALTER TABLE messages ADD COLUMN client_message_id TEXT;
        CREATE UNIQUE INDEX messages_by_client_id ON messages (convo_id, sender, client_message_id);
        """),
        // v1.1 roles: who besides the creator may add and remove members, and which inactive
        // members left by themselves (any member may then commit their removal).
        (3, """
        CREATE TABLE convo_admins (
            convo_id TEXT NOT NULL REFERENCES convos (id),
            did TEXT NOT NULL,
            PRIMARY KEY (convo_id, did)
        );
        ALTER TABLE members ADD COLUMN has_left INTEGER NOT NULL DEFAULT 0;
        """),
        // v1.3 compaction: each member's processed cursor (a new member starts at the commit
        // that added it), checkpoints (application messages holding the whole document), and
        // where the convo's kept messages begin.
        (4, """
        ALTER TABLE members ADD COLUMN processed_seq INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE members ADD COLUMN cursor_at INTEGER;
        ALTER TABLE messages ADD COLUMN checkpoint INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX messages_checkpoints ON messages (convo_id, seq) WHERE checkpoint = 1;
        ALTER TABLE convos ADD COLUMN compacted_before INTEGER NOT NULL DEFAULT 0;
        """),
        // Store once (`PendingEvent`): an event's payload is one `event_payloads` row that every
        // recipient's `events` row references, and a Welcome is one `welcome_blobs` row that
        // every member it adds references. Existing rows keep their ids (SSE cursors): each
        // old event becomes a payload of its own, identical old Welcomes one blob.
        (5, """
        CREATE TABLE event_payloads (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            convo_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        INSERT INTO event_payloads (id, convo_id, kind, payload, created_at)
            SELECT id, convo_id, kind, payload, created_at FROM events;
        ALTER TABLE events ADD COLUMN payload_id INTEGER;
        UPDATE events SET payload_id = id;
        ALTER TABLE events DROP COLUMN convo_id;
        ALTER TABLE events DROP COLUMN kind;
        ALTER TABLE events DROP COLUMN payload;
        ALTER TABLE events DROP COLUMN created_at;
        CREATE INDEX events_by_payload ON events (payload_id);
        CREATE INDEX event_payloads_by_time ON event_payloads (created_at);
        CREATE TABLE welcome_blobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            convo_id TEXT NOT NULL REFERENCES convos (id),
            epoch INTEGER NOT NULL,
            welcome BLOB NOT NULL
        );
        INSERT INTO welcome_blobs (convo_id, epoch, welcome) SELECT DISTINCT convo_id, epoch, welcome FROM welcomes;
        ALTER TABLE welcomes ADD COLUMN blob_id INTEGER;
        UPDATE welcomes SET blob_id = (
            SELECT b.id FROM welcome_blobs b
            WHERE b.convo_id = welcomes.convo_id AND b.epoch = welcomes.epoch AND b.welcome = welcomes.welcome);
        ALTER TABLE welcomes DROP COLUMN welcome;
        ALTER TABLE welcomes DROP COLUMN epoch;
        CREATE INDEX welcomes_by_blob ON welcomes (blob_id);
        """),
        // Compaction forgets a convo's `message` events below its point with its messages
        // (`forgetMessages`): found by convo and time.
        (6, """
        CREATE INDEX event_payloads_by_convo ON event_payloads (convo_id, created_at);
        """),
    ]
}
