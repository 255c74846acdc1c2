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
        (3, [
            // Subscriptions read `recipient = $1 AND id > cursor`: one index serves them and
            // keeps ids unique (the sequence already does), instead of two per event row.
            "ALTER TABLE events DROP CONSTRAINT events_pkey",
            "ALTER TABLE events ADD PRIMARY KEY (recipient, id)",
            "DROP INDEX events_by_recipient",
            lockEventRecipientsFunction,
            sendMessageFunction,
        ]),
        (4, [
            // v1.1: `sendMessage`'s idempotency key, unique per (convo, sender); NULLs stay distinct.
            "ALTER TABLE messages ADD COLUMN client_message_id TEXT",
            "CREATE UNIQUE INDEX messages_by_client_id ON messages (convo_id, sender, client_message_id)",
            // The function gained parameters: drop the v1 overload (version 3 on older
            // databases), then (re)create the current one.
            "DROP FUNCTION IF EXISTS imprint_send_message(TEXT, BIGINT, BIGINT, TEXT, TEXT, BIGINT, TEXT, TEXT, BIGINT, TEXT, BIGINT, TEXT)",
            sendMessageFunction,
        ]),
        (5, [
            // v1.1 roles: who besides the creator may add and remove members, and which
            // inactive members left by themselves (any member may then commit their removal).
            """
            CREATE TABLE convo_admins (
                convo_id TEXT NOT NULL REFERENCES convos (id),
                did TEXT NOT NULL,
                PRIMARY KEY (convo_id, did)
            )
            """,
            "ALTER TABLE members ADD COLUMN has_left BOOLEAN NOT NULL DEFAULT FALSE",
        ]),
        (6, [
            publishKeyPackageFunction,
        ]),
        // v1.3 compaction: each member's processed cursor (a new member starts at the commit
        // that added it), checkpoints (application messages holding the whole document), and
        // where the convo's kept messages begin.
        (7, [
            "ALTER TABLE members ADD COLUMN processed_seq BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE members ADD COLUMN cursor_at BIGINT",
            "ALTER TABLE messages ADD COLUMN checkpoint BOOLEAN NOT NULL DEFAULT FALSE",
            "CREATE INDEX messages_checkpoints ON messages (convo_id, seq) WHERE checkpoint",
            "ALTER TABLE convos ADD COLUMN compacted_before BIGINT NOT NULL DEFAULT 0",
        ]),
        // Store once (`PendingEvent`): an event's payload is one `event_payloads` row that
        // every recipient's `events` row references, and a Welcome is one `welcome_blobs` row
        // that every member it adds references. Existing rows keep their ids (SSE cursors):
        // each old event becomes a payload of its own, identical old Welcomes one blob.
        (8, [
            """
            CREATE TABLE event_payloads (
                id BIGSERIAL PRIMARY KEY,
                convo_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                payload TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "INSERT INTO event_payloads (id, convo_id, kind, payload, created_at) SELECT id, convo_id, kind, payload, created_at FROM events",
            "SELECT setval(pg_get_serial_sequence('event_payloads', 'id'), COALESCE((SELECT MAX(id) FROM event_payloads), 0) + 1, false)",
            "ALTER TABLE events ADD COLUMN payload_id BIGINT",
            "UPDATE events SET payload_id = id",
            "ALTER TABLE events ALTER COLUMN payload_id SET NOT NULL",
            "ALTER TABLE events DROP COLUMN convo_id, DROP COLUMN kind, DROP COLUMN payload, DROP COLUMN created_at",
            "CREATE INDEX events_by_payload ON events (payload_id)",
            "CREATE INDEX event_payloads_by_time ON event_payloads (created_at)",
            """
            CREATE TABLE welcome_blobs (
                id BIGSERIAL PRIMARY KEY,
                convo_id TEXT NOT NULL REFERENCES convos (id),
                epoch BIGINT NOT NULL,
                welcome BYTEA NOT NULL
            )
            """,
            "INSERT INTO welcome_blobs (convo_id, epoch, welcome) SELECT DISTINCT convo_id, epoch, welcome FROM welcomes",
            "ALTER TABLE welcomes ADD COLUMN blob_id BIGINT",
            """
            UPDATE welcomes w SET blob_id = b.id FROM welcome_blobs b
            WHERE b.convo_id = w.convo_id AND b.epoch = w.epoch AND b.welcome = w.welcome
            """,
            "ALTER TABLE welcomes ALTER COLUMN blob_id SET NOT NULL",
            "ALTER TABLE welcomes DROP COLUMN welcome, DROP COLUMN epoch",
            "CREATE INDEX welcomes_by_blob ON welcomes (blob_id)",
            sendMessageFunction,
        ]),
        // Compaction forgets a convo's `message` events below its point with its messages
        // (`forgetMessages`): found by convo and time.
        (9, [
            "CREATE INDEX event_payloads_by_convo ON event_payloads (convo_id, created_at)",
        ]),
    ]

    /// Advisory-lock namespaces (the first key of `pg_advisory_xact_lock(int4, int4)`, a space
    /// apart from the one-key locks used for migrations).
    static let fanOutLockSpace: Int32 = 0x494D_5046  // "IMPF": (space, 0) guards all fan-out
    static let recipientLockSpace: Int32 = 0x494D_5052  // "IMPR": (space, hashtext(did)) per recipient
    /// Above this many recipients a transaction takes the fan-out lock exclusively instead of
    /// one lock per recipient, so no transaction needs more than this many lock-table slots.
    static let maxRecipientLocks = 32

    /// Called before a transaction inserts event rows for `p_recipients` (after its convo row
    /// lock, once per transaction): takes transaction-scoped advisory locks, held until COMMIT.
    ///
    /// Event ids come from one sequence and are drawn at insert time, so without a lock two
    /// transactions could commit one recipient's ids out of order, and a subscriber reading in
    /// between would move its cursor past the late one. Here every transaction writing events
    /// for a recipient holds that recipient's lock from its event inserts through COMMIT, so a
    /// recipient's ids become visible in ascending order, which is all a subscription
    /// (`recipient = $1 AND id > cursor`) needs; transactions for disjoint recipients run in
    /// parallel. (The lock key is a 32-bit hash of the DID: a collision only serializes two
    /// recipients that need not be.) A transaction with more than `maxRecipientLocks`
    /// recipients takes the fan-out lock exclusively instead; the others hold it shared.
    /// Locks are taken in one global order (fan-out lock, then recipient keys ascending),
    /// after the single convo row lock, so they cannot deadlock. Advisory locks live in shared
    /// memory: unlike row locks they write nothing to tables or WAL.
    static let lockEventRecipientsFunction = """
        CREATE OR REPLACE FUNCTION imprint_lock_event_recipients(p_recipients TEXT[]) RETURNS void
        LANGUAGE plpgsql AS $$
        BEGIN
            IF cardinality(p_recipients) > \(maxRecipientLocks) THEN
                PERFORM pg_advisory_xact_lock(\(fanOutLockSpace), 0);
                RETURN;
            END IF;
            PERFORM pg_advisory_xact_lock_shared(\(fanOutLockSpace), 0);
            PERFORM pg_advisory_xact_lock(\(recipientLockSpace), s.k)
            FROM (SELECT DISTINCT hashtext(r) AS k FROM unnest(p_recipients) AS r ORDER BY 1) AS s;
        END
        $$
        """

    /// `sendMessage` in one statement, so one round trip per request, in its own transaction
    /// (the caller runs it outside BEGIN … COMMIT):
    /// 1. records the token's replay key (`token_replays`, as `PostgresTokenReplayGuard` does);
    ///    a replay returns `replayed` and changes nothing;
    /// 2. locks the convo row, checks the sender is an active member and the epoch is current;
    ///    a refusal returns `convo_not_found` / `not_member` / `epoch_mismatch` (with the current
    ///    epoch) *without* raising, so the transaction still commits the replay key: a refused
    ///    request uses its token up, as on every other path;
    /// 2b. (v1.1) when `p_client_message_id` names a message the sender stored before in this
    ///    convo, returns `duplicate` with its seq and resulting epoch and the current roster
    ///    (no new seq, no event), or `client_id_reused` when its type, hash or size differ. This
    ///    runs after the convo row lock, so a retry racing the first call waits for it and sees
    ///    its row (READ COMMITTED takes a new snapshot per statement);
    /// 3. bumps `last_seq` (and `epoch` for a commit), inserts the message, reads the roster with
    ///    storage providers, stores the `message` event's payload once and gives every active
    ///    member a row referencing it, under `imprint_lock_event_recipients`.
    /// The event payload is the wire JSON of `MessageEvent` (`p_sent_at_text` is the RFC 3339
    /// time the Swift side formats); the result row carries what the response needs.
    static let sendMessageFunction = """
        CREATE OR REPLACE FUNCTION imprint_send_message(
            p_replay_key TEXT, p_replay_expiry BIGINT, p_now_seconds BIGINT,
            p_convo TEXT, p_sender TEXT, p_epoch BIGINT, p_type TEXT, p_hash TEXT, p_size BIGINT,
            p_record_name TEXT, p_sent_at BIGINT, p_sent_at_text TEXT, p_client_message_id TEXT, p_commit BYTEA)
        RETURNS TABLE (r_outcome TEXT, r_epoch BIGINT, r_seq BIGINT, r_dids TEXT[], r_providers TEXT[])
        LANGUAGE plpgsql AS $$
        DECLARE
            v_epoch BIGINT;
            v_last_seq BIGINT;
            v_seq BIGINT;
            v_new_epoch BIGINT;
            v_dids TEXT[];
            v_providers TEXT[];
            v_payload_id BIGINT;
            v_first RECORD;
        BEGIN
            INSERT INTO token_replays AS t (key, expires_at) VALUES (p_replay_key, p_replay_expiry)
            ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE t.expires_at < p_now_seconds;
            IF NOT FOUND THEN
                RETURN QUERY SELECT 'replayed'::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT[], NULL::TEXT[];
                RETURN;
            END IF;

            SELECT c.epoch, c.last_seq INTO v_epoch, v_last_seq FROM convos c WHERE c.id = p_convo FOR UPDATE;
            IF NOT FOUND THEN
                RETURN QUERY SELECT 'convo_not_found'::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT[], NULL::TEXT[];
                RETURN;
            END IF;
            IF NOT EXISTS (SELECT 1 FROM members m WHERE m.convo_id = p_convo AND m.did = p_sender AND m.active) THEN
                RETURN QUERY SELECT 'not_member'::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT[], NULL::TEXT[];
                RETURN;
            END IF;
            IF p_client_message_id IS NOT NULL THEN
                SELECT x.seq, x.epoch, x.message_type, x.hash, x.size INTO v_first FROM messages x
                WHERE x.convo_id = p_convo AND x.sender = p_sender AND x.client_message_id = p_client_message_id;
                IF FOUND THEN
                    IF v_first.message_type <> p_type OR v_first.hash <> p_hash OR v_first.size <> p_size THEN
                        RETURN QUERY SELECT 'client_id_reused'::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT[], NULL::TEXT[];
                        RETURN;
                    END IF;
                    SELECT array_agg(m.did ORDER BY m.did), array_agg(COALESCE(s.provider, '') ORDER BY m.did)
                    INTO v_dids, v_providers
                    FROM members m LEFT JOIN storage_providers s ON s.did = m.did
                    WHERE m.convo_id = p_convo AND m.active;
                    RETURN QUERY SELECT 'duplicate'::TEXT,
                        CASE WHEN v_first.message_type = 'commit' THEN v_first.epoch + 1 ELSE v_first.epoch END,
                        v_first.seq, v_dids, v_providers;
                    RETURN;
                END IF;
            END IF;
            IF v_epoch <> p_epoch THEN
                RETURN QUERY SELECT 'epoch_mismatch'::TEXT, v_epoch, NULL::BIGINT, NULL::TEXT[], NULL::TEXT[];
                RETURN;
            END IF;

            v_seq := v_last_seq + 1;
            v_new_epoch := CASE WHEN p_type = 'commit' THEN v_epoch + 1 ELSE v_epoch END;
            UPDATE convos SET epoch = v_new_epoch, last_seq = v_seq WHERE id = p_convo;
            INSERT INTO messages (convo_id, seq, epoch, sender, message_type, hash, size, sent_at, record_name, commit_blob, client_message_id)
            VALUES (p_convo, v_seq, v_epoch, p_sender, p_type, p_hash, p_size, p_sent_at, p_record_name, p_commit, p_client_message_id);

            SELECT array_agg(m.did ORDER BY m.did), array_agg(COALESCE(s.provider, '') ORDER BY m.did)
            INTO v_dids, v_providers
            FROM members m LEFT JOIN storage_providers s ON s.did = m.did
            WHERE m.convo_id = p_convo AND m.active;

            INSERT INTO event_payloads (convo_id, kind, payload, created_at)
            VALUES (p_convo, 'message', json_build_object(
                'convoId', p_convo, 'seq', v_seq, 'epoch', v_epoch, 'sender', p_sender,
                'messageType', p_type, 'hash', p_hash, 'size', p_size, 'sentAt', p_sent_at_text,
                'recordName', p_record_name)::TEXT, p_sent_at)
            RETURNING id INTO v_payload_id;
            PERFORM imprint_lock_event_recipients(v_dids);
            INSERT INTO events (recipient, payload_id)
            SELECT u.r, v_payload_id
            FROM unnest(v_dids) WITH ORDINALITY AS u (r, n) ORDER BY u.n;

            RETURN QUERY SELECT 'ok'::TEXT, v_new_epoch, v_seq, v_dids, v_providers;
        END
        $$
        """

    /// Publishes one key package in one round trip, or refuses it when its DID already has
    /// `p_limit` unexpired ones: returns TRUE when the row was inserted.
    ///
    /// The per-DID advisory lock (held until COMMIT) makes "count, then insert" atomic among
    /// concurrent publishers of one DID, so no DID ever holds more than the limit; expired rows
    /// are dropped under the same lock first so they do not count. Before version 6 these were
    /// five statements of one transaction holding the lock across every round trip, so a
    /// burst of publishes for one DID queued behind each other's network latency; as one
    /// statement the lock is held only while the function runs and commits.
    static let publishKeyPackageFunction = """
        CREATE OR REPLACE FUNCTION imprint_publish_key_package(
            p_id TEXT, p_did TEXT, p_cipher_suite BIGINT, p_key_package BYTEA,
            p_expires_at BIGINT, p_now BIGINT, p_limit BIGINT)
        RETURNS BOOLEAN
        LANGUAGE plpgsql AS $$
        DECLARE
            v_count BIGINT;
        BEGIN
            PERFORM pg_advisory_xact_lock(hashtextextended(p_did, 0));
            DELETE FROM key_packages WHERE did = p_did AND expires_at <= p_now;
            SELECT COUNT(*) INTO v_count FROM key_packages WHERE did = p_did;
            IF v_count >= p_limit THEN
                RETURN FALSE;
            END IF;
            INSERT INTO key_packages (id, did, cipher_suite, key_package, expires_at, created_at)
            VALUES (p_id, p_did, p_cipher_suite, p_key_package, p_expires_at, p_now);
            RETURN TRUE;
        END
        $$
        """
}
