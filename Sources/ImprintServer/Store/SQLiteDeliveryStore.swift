import Foundation
import GRDB
import ImprintDelivery

/// The embedded default store: one SQLite file in WAL mode through a GRDB `DatabasePool`.
///
/// Concurrency: SQLite admits one writer at a time and GRDB serializes every `write` on one
/// queue, so each procedure below is a single serial transaction: key packages are selected
/// and deleted in the same transaction (never handed out twice), and `last_seq`/`epoch` are
/// read and bumped in the same transaction (gapless seqs, one winner per epoch). Event ids
/// come from AUTOINCREMENT inside those transactions, so they commit in id order.
public final class SQLiteDeliveryStore: DeliveryStore {
    package let pool: DatabasePool
    /// Every write goes through here: concurrent requests share one transaction.
    package let groupCommit: SQLiteGroupCommit
    public let eventBell = EventBell()
    /// One process owns an embedded database, so the hub is the only instance's and
    /// `relayEphemeral` publishes to it directly.
    public let ephemeralHub = EphemeralHub()
    /// One process owns an embedded database, so an in-memory guard is exact.
    public let tokenReplayGuard: any TokenReplayGuard = TokenReplayCache()

    /// Opens (creating if needed) the database file at `path`.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(cached: "PRAGMA synchronous = NORMAL")
            try db.execute(cached: "PRAGMA foreign_keys = ON")
            // Each group-commit piece runs in a savepoint, whose statement journal grows over
            // the whole batch; on disk (the default) it spilled to a temporary file past 64 KiB,
            // costing more write syscalls than the WAL itself. A batch's journal is bounded
            // (at most `SQLiteGroupCommit.maxBatch` pieces), so memory holds it.
            try db.execute(cached: "PRAGMA temp_store = MEMORY")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        groupCommit = SQLiteGroupCommit(writer: pool)
    }

    public func migrate() async throws {
        try await useIncrementalVacuum()
        try await applyMigrations(SQLiteSchema.migrations)
    }

    /// Makes the file one whose free pages can be given back (`reclaimFreePages`). A file
    /// made before v1.3 is rewritten once (`VACUUM`), at its first start with this version.
    func useIncrementalVacuum() async throws {
        try await pool.barrierWriteWithoutTransaction { db in
            let incremental = 2
            guard try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != incremental else { return }
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            // A file in WAL mode (GRDB's pool makes it so on open) takes the setting only
            // through a VACUUM, instant on a new file.
            if try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != incremental {
                try db.execute(sql: "VACUUM")
            }
        }
    }

    /// Gives the file's free pages back to the file system (after compaction deleted rows),
    /// so the data directory shrinks.
    package func reclaimFreePages() async throws {
        try await pool.barrierWriteWithoutTransaction { db in
            try db.execute(sql: "PRAGMA incremental_vacuum")
            // The pages leave the main file when the WAL is checkpointed into it.
            _ = try? db.checkpoint(.truncate)
        }
    }

    /// Applies the migrations not yet recorded in `schema_migrations`, in order, each in the
    /// transaction that records it. Other modules sharing the database (the zone service) add
    /// theirs here with versions of their own range.
    package func applyMigrations(_ migrations: [(version: Int, sql: String)]) async throws {
        try await pool.write { db in
            try db.execute(cached: "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)")
            let applied = Set(try Int.fetchAll(try db.cachedStatement(sql: "SELECT version FROM schema_migrations")))
            for migration in migrations where !applied.contains(migration.version) {
                try db.execute(sql: migration.sql)
                try db.execute(
                    sql: "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    arguments: [migration.version, StoreTime.millis(Date())])
            }
        }
    }

    public func shutdown() async throws {
        eventBell.closeAll()
        ephemeralHub.closeAll()
        try pool.close()
    }

    // MARK: Key packages

    public func publishKeyPackage(_ package: NewKeyPackage) async throws -> String {
        let id = UUID().uuidString.lowercased()
        try await groupCommit.write { db in
            let now = StoreTime.millis(package.now)
            try db.execute(cached: "DELETE FROM key_packages WHERE did = ? AND expires_at <= ?", arguments: [package.did, now])
            let count = try Int.fetchOne(try db.cachedStatement(sql: "SELECT COUNT(*) FROM key_packages WHERE did = ?"), arguments: [package.did]) ?? 0
            guard count < package.limit else { throw DeliveryError.tooManyKeyPackages(limit: package.limit) }
            let ordinal = (try Int64.fetchOne(try db.cachedStatement(sql: "SELECT MAX(ordinal) FROM key_packages")) ?? 0) + 1
            try db.execute(
                cached: """
                INSERT INTO key_packages (id, did, cipher_suite, key_package, expires_at, created_at, ordinal)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                arguments: [id, package.did, package.cipherSuite, package.keyPackage, StoreTime.millis(package.expiresAt), now, ordinal])
        }
        return id
    }

    public func consumeKeyPackages(dids: [String], cipherSuite: Int?, now: Date) async throws -> [KeyPackageRef] {
        try await groupCommit.write { db in
            var handedOut: [KeyPackageRef] = []
            for did in dids {
                let row = try Row.fetchOne(try db.cachedStatement(sql: """
                    SELECT id, cipher_suite, key_package FROM key_packages
                    WHERE did = ? AND expires_at > ? AND (? IS NULL OR cipher_suite = ?)
                    ORDER BY ordinal LIMIT 1
                    """),
                    arguments: [did, StoreTime.millis(now), cipherSuite, cipherSuite])
                guard let row else { continue }
                let id: String = row["id"]
                try db.execute(cached: "DELETE FROM key_packages WHERE id = ?", arguments: [id])
                handedOut.append(KeyPackageRef(did: did, id: id, cipherSuite: row["cipher_suite"], keyPackage: row["key_package"]))
            }
            return handedOut
        }
    }

    // MARK: Convos

    public func createConvo(_ convo: NewConvo) async throws -> ConvoView {
        try await groupCommit.write { db in
            if try Bool.fetchOne(try db.cachedStatement(sql: "SELECT 1 FROM convos WHERE id = ?"), arguments: [convo.id]) != nil {
                throw DeliveryError.convoExists(convo.id)
            }
            let now = StoreTime.millis(convo.now)
            try db.execute(
                cached: "INSERT INTO convos (id, creator, title, cipher_suite, epoch, last_seq, created_at) VALUES (?, ?, ?, ?, 0, 0, ?)",
                arguments: [convo.id, convo.creator, convo.title, convo.cipherSuite, now])
            try db.execute(
                cached: "INSERT INTO members (convo_id, did, joined_at, active) VALUES (?, ?, ?, 1)",
                arguments: [convo.id, convo.creator, now])
            try Self.replaceAdmins(db, convoId: convo.id, creator: convo.creator, admins: convo.admins)
            return try Self.convoView(db, id: convo.id)!
        }
    }

    public func convos(memberDID: String) async throws -> [ConvoView] {
        try await pool.read { db in
            let ids = try String.fetchAll(try db.cachedStatement(sql: """
                SELECT c.id FROM convos c JOIN members m ON m.convo_id = c.id
                WHERE m.did = ? AND m.active = 1 ORDER BY c.created_at, c.id
                """),
                arguments: [memberDID])
            return try ids.compactMap { try Self.convoView(db, id: $0) }
        }
    }

    public func setAdmins(convoId: String, caller: String, admins: [String]) async throws -> ConvoView {
        try await groupCommit.write { db in
            _ = try Self.lockMemberConvo(db, convoId: convoId, caller: caller)
            let creator = try String.fetchOne(try db.cachedStatement(sql: "SELECT creator FROM convos WHERE id = ?"), arguments: [convoId])
            guard creator == caller else { throw DeliveryError.forbidden("only the convo's creator may set its admins") }
            for did in admins where try !Self.isActiveMember(db, convoId: convoId, did: did) {
                throw DeliveryError.invalidRequest("\(did) is not a member of convo \(convoId)")
            }
            try Self.replaceAdmins(db, convoId: convoId, creator: caller, admins: admins)
            return try Self.convoView(db, id: convoId)!
        }
    }

    static func replaceAdmins(_ db: Database, convoId: String, creator: String, admins: [String]) throws {
        try db.execute(cached: "DELETE FROM convo_admins WHERE convo_id = ?", arguments: [convoId])
        for did in admins where did != creator {
            try db.execute(cached: "INSERT INTO convo_admins (convo_id, did) VALUES (?, ?)", arguments: [convoId, did])
        }
    }

    /// Throws `forbidden` unless `caller` is the convo's creator or one of its admins.
    static func requireAdmin(_ db: Database, convoId: String, caller: String) throws {
        let allowed = try Bool.fetchOne(try db.cachedStatement(sql: """
            SELECT 1 FROM convos WHERE id = ? AND creator = ?
            UNION ALL SELECT 1 FROM convo_admins WHERE convo_id = ? AND did = ?
            """), arguments: [convoId, caller, convoId, caller]) != nil
        guard allowed else { throw DeliveryError.forbidden("only the convo's creator and admins may change its members") }
    }

    static func convoView(_ db: Database, id: String) throws -> ConvoView? {
        guard let row = try Row.fetchOne(try db.cachedStatement(sql: "SELECT * FROM convos WHERE id = ?"), arguments: [id]) else { return nil }
        let members = try Row.fetchAll(try db.cachedStatement(sql: "SELECT did, joined_at FROM members WHERE convo_id = ? AND active = 1 ORDER BY joined_at, did"),
            arguments: [id]
        ).map { ConvoView.Member(did: $0["did"], joinedAt: StoreTime.date($0["joined_at"])) }
        let creator: String = row["creator"]
        let admins = try String.fetchAll(try db.cachedStatement(sql: "SELECT did FROM convo_admins WHERE convo_id = ? ORDER BY did"), arguments: [id])
        return ConvoView(
            id: row["id"], creator: creator, title: row["title"], cipherSuite: row["cipher_suite"],
            epoch: row["epoch"], createdAt: StoreTime.date(row["created_at"]), members: members, admins: [creator] + admins)
    }

    /// The convo's epoch and last seq, after checking that it exists and `caller` is active in it.
    static func lockMemberConvo(_ db: Database, convoId: String, caller: String) throws -> (epoch: Int, lastSeq: Int) {
        guard let row = try Row.fetchOne(try db.cachedStatement(sql: "SELECT epoch, last_seq FROM convos WHERE id = ?"), arguments: [convoId]) else {
            throw DeliveryError.convoNotFound(convoId)
        }
        guard try isActiveMember(db, convoId: convoId, did: caller) else { throw DeliveryError.notMember(convoId) }
        return (row["epoch"], row["last_seq"])
    }

    static func isActiveMember(_ db: Database, convoId: String, did: String) throws -> Bool {
        try Bool.fetchOne(try db.cachedStatement(sql: "SELECT 1 FROM members WHERE convo_id = ? AND did = ? AND active = 1"), arguments: [convoId, did]) != nil
    }

    static func activeMembers(_ db: Database, convoId: String) throws -> [String] {
        try String.fetchAll(try db.cachedStatement(sql: "SELECT did FROM members WHERE convo_id = ? AND active = 1 ORDER BY did"), arguments: [convoId])
    }

    // MARK: Membership

    public func addMembers(_ change: MemberAddition) async throws -> EpochAdvanceOutput {
        let result = try await groupCommit.write { db -> (output: EpochAdvanceOutput, recipients: [String]) in
            let current = try Self.lockMemberConvo(db, convoId: change.convoId, caller: change.caller)
            try Self.requireAdmin(db, convoId: change.convoId, caller: change.caller)
            guard current.epoch == change.epoch else { throw DeliveryError.epochMismatch(current: current.epoch) }
            for did in change.dids where try Self.isActiveMember(db, convoId: change.convoId, did: did) {
                throw DeliveryError.invalidRequest("\(did) is already a member")
            }
            let advance = EpochAdvanceOutput(epoch: current.epoch + 1, seq: current.lastSeq + 1)
            let now = StoreTime.millis(change.now)
            let message = Self.commitMessage(sender: change.caller, epoch: current.epoch, seq: advance.seq, commit: change.commit, now: change.now)
            try Self.advance(db, convoId: change.convoId, to: advance, message: message, commit: change.commit)
            // The Welcome is stored once, however many members it adds.
            try db.execute(cached: "INSERT INTO welcome_blobs (convo_id, epoch, welcome) VALUES (?, ?, ?)",
                           arguments: [change.convoId, advance.epoch, change.welcome])
            let welcome = db.lastInsertedRowID
            for did in change.dids {
                // v1.3: a new member needs nothing before the commit that adds it.
                try db.execute(
                    cached: """
                    INSERT INTO members (convo_id, did, joined_at, active, processed_seq) VALUES (?, ?, ?, 1, ?)
                    ON CONFLICT (convo_id, did) DO UPDATE SET active = 1, has_left = 0, joined_at = excluded.joined_at,
                        processed_seq = excluded.processed_seq, cursor_at = NULL
                    """,
                    arguments: [change.convoId, did, now, advance.seq])
                let replaced = try Int64.fetchOne(
                    try db.cachedStatement(sql: "SELECT blob_id FROM welcomes WHERE convo_id = ? AND did = ?"), arguments: [change.convoId, did])
                try db.execute(
                    cached: """
                    INSERT INTO welcomes (convo_id, did, blob_id) VALUES (?, ?, ?)
                    ON CONFLICT (convo_id, did) DO UPDATE SET blob_id = excluded.blob_id
                    """,
                    arguments: [change.convoId, did, welcome])
                if let replaced { try Self.dropWelcomeBlobIfUnused(db, replaced) }
            }
            let members = try Self.activeMembers(db, convoId: change.convoId)
            let events = PendingEvent.addition(convoId: change.convoId, commit: message, added: change.dids, members: members)
            return (advance, try Self.append(db, events: events, now: now))
        }
        eventBell.ring(recipients: result.recipients)
        return result.output
    }

    public func removeMember(_ change: MemberRemoval) async throws -> EpochAdvanceOutput {
        let result = try await groupCommit.write { db -> (output: EpochAdvanceOutput, recipients: [String]) in
            let current = try Self.lockMemberConvo(db, convoId: change.convoId, caller: change.caller)
            let target = try Row.fetchOne(try db.cachedStatement(sql: "SELECT active, has_left FROM members WHERE convo_id = ? AND did = ?"),
                arguments: [change.convoId, change.did])
            let active: Bool = target?["active"] ?? false
            let departed: Bool = !active && (target?["has_left"] ?? false)
            // A member who left is removed by whoever commits next; anyone else takes an admin.
            if !departed { try Self.requireAdmin(db, convoId: change.convoId, caller: change.caller) }
            guard current.epoch == change.epoch else { throw DeliveryError.epochMismatch(current: current.epoch) }
            guard active || departed else {
                throw DeliveryError.notFound("\(change.did) is not a member of convo \(change.convoId)")
            }
            let advance = EpochAdvanceOutput(epoch: current.epoch + 1, seq: current.lastSeq + 1)
            let message = Self.commitMessage(sender: change.caller, epoch: current.epoch, seq: advance.seq, commit: change.commit, now: change.now)
            try Self.advance(db, convoId: change.convoId, to: advance, message: message, commit: change.commit)
            try db.execute(cached: "UPDATE members SET active = 0, has_left = 0 WHERE convo_id = ? AND did = ?", arguments: [change.convoId, change.did])
            _ = try Self.deleteWelcome(db, convoId: change.convoId, did: change.did)
            try db.execute(cached: "DELETE FROM convo_admins WHERE convo_id = ? AND did = ?", arguments: [change.convoId, change.did])
            let members = try Self.activeMembers(db, convoId: change.convoId)
            return (advance, try Self.append(db, events: [
                PendingEvent(payload: .message(MessageEvent(convoId: change.convoId, message: message)), recipients: members),
                PendingEvent(
                    payload: .membership(MembershipEvent(convoId: change.convoId, did: change.did, action: .removed)),
                    recipients: members + [change.did]),
            ], now: StoreTime.millis(change.now)))
        }
        eventBell.ring(recipients: result.recipients + [MembershipWatch.key(change.did)])
        return result.output
    }

    public func leaveConvo(convoId: String, did: String, now: Date) async throws {
        let recipients = try await groupCommit.write { db in
            _ = try Self.lockMemberConvo(db, convoId: convoId, caller: did)
            try db.execute(cached: "UPDATE members SET active = 0, has_left = 1 WHERE convo_id = ? AND did = ?", arguments: [convoId, did])
            _ = try Self.deleteWelcome(db, convoId: convoId, did: did)
            try db.execute(cached: "DELETE FROM convo_admins WHERE convo_id = ? AND did = ?", arguments: [convoId, did])
            let members = try Self.activeMembers(db, convoId: convoId)
            return try Self.append(db, events: [
                PendingEvent(payload: .membership(MembershipEvent(convoId: convoId, did: did, action: .left)), recipients: members + [did])
            ], now: StoreTime.millis(now))
        }
        eventBell.ring(recipients: recipients + [MembershipWatch.key(did)])
    }

    public func welcome(convoId: String, did: String) async throws -> GetWelcomeOutput? {
        try await pool.read { db in
            try Row.fetchOne(
                try db.cachedStatement(sql: """
                    SELECT b.welcome, b.epoch FROM welcomes w JOIN welcome_blobs b ON b.id = w.blob_id
                    WHERE w.convo_id = ? AND w.did = ?
                    """),
                arguments: [convoId, did]
            ).map { GetWelcomeOutput(welcome: $0["welcome"], epoch: $0["epoch"]) }
        }
    }

    public func deleteWelcome(convoId: String, did: String) async throws {
        try await groupCommit.write { db in
            guard try Self.deleteWelcome(db, convoId: convoId, did: did) else { throw DeliveryError.noWelcome(convoId) }
        }
    }

    /// Drops `did`'s reference to its Welcome in `convoId`, and the Welcome's bytes once no
    /// member references them. False when there was none.
    static func deleteWelcome(_ db: Database, convoId: String, did: String) throws -> Bool {
        guard let blob = try Int64.fetchOne(
            try db.cachedStatement(sql: "DELETE FROM welcomes WHERE convo_id = ? AND did = ? RETURNING blob_id"), arguments: [convoId, did])
        else { return false }
        try dropWelcomeBlobIfUnused(db, blob)
        return true
    }

    static func dropWelcomeBlobIfUnused(_ db: Database, _ blob: Int64) throws {
        try db.execute(
            cached: "DELETE FROM welcome_blobs WHERE id = ? AND NOT EXISTS (SELECT 1 FROM welcomes WHERE blob_id = ?)",
            arguments: [blob, blob])
    }

    // MARK: Messages

    public func sendMessage(_ input: NewMessage, admitting token: TokenAdmission) async throws -> SendMessageOutput {
        try await token.admit(with: tokenReplayGuard)
        let result = try await groupCommit.write { db -> (output: SendMessageOutput, recipients: [String]) in
            let current = try Self.lockMemberConvo(db, convoId: input.convoId, caller: input.sender)
            if let id = input.clientMessageId, let first = try Self.earlierSend(db, input, clientMessageId: id) {
                let recipients = try Self.recipientsWithStorage(db, convoId: input.convoId)
                    .filter { $0.did != input.sender }.map { Recipient(did: $0.did, storage: $0.storage) }
                return (SendMessageOutput(seq: first.seq, epoch: first.epoch, recipients: recipients, serverTime: input.now), [])
            }
            guard current.epoch == input.epoch else { throw DeliveryError.epochMismatch(current: current.epoch) }
            let newEpoch = input.messageType == .commit ? current.epoch + 1 : current.epoch
            let message = MessageView(
                seq: current.lastSeq + 1, epoch: current.epoch, sender: input.sender, messageType: input.messageType,
                hash: input.hash, size: input.size, sentAt: input.now, recordName: input.recordName)
            try Self.advance(
                db, convoId: input.convoId, to: EpochAdvanceOutput(epoch: newEpoch, seq: message.seq), message: message,
                commit: input.commit, clientMessageId: input.clientMessageId)
            let roster = try Self.recipientsWithStorage(db, convoId: input.convoId)
            let woken = try Self.append(db, events: [
                PendingEvent(payload: .message(MessageEvent(convoId: input.convoId, message: message)), recipients: roster.map(\.did))
            ], now: StoreTime.millis(input.now))
            let recipients = roster.filter { $0.did != input.sender }.map { Recipient(did: $0.did, storage: $0.storage) }
            return (SendMessageOutput(seq: message.seq, epoch: newEpoch, recipients: recipients, serverTime: input.now), woken)
        }
        eventBell.ring(recipients: result.recipients)
        return result.output
    }

    /// The answer of the sender's earlier `sendMessage` under `clientMessageId` (its seq, and the
    /// epoch it left the convo at), or nil when there is none; a different message under the
    /// same id throws `clientMessageIdReused`.
    static func earlierSend(_ db: Database, _ input: NewMessage, clientMessageId: String) throws -> (seq: Int, epoch: Int)? {
        guard let row = try Row.fetchOne(try db.cachedStatement(sql: """
            SELECT seq, epoch, message_type, hash, size FROM messages WHERE convo_id = ? AND sender = ? AND client_message_id = ?
            """), arguments: [input.convoId, input.sender, clientMessageId]) else { return nil }
        let type: String = row["message_type"]
        guard type == input.messageType.rawValue, row["hash"] == input.hash, row["size"] == input.size else {
            throw DeliveryError.clientMessageIdReused(clientMessageId)
        }
        let epoch: Int = row["epoch"]
        return (row["seq"], type == MessageType.commit.rawValue ? epoch + 1 : epoch)
    }

    public func messages(convoId: String, caller: String, sinceSeq: Int, limit: Int) async throws -> [MessageView] {
        try await pool.read { db in
            _ = try Self.lockMemberConvo(db, convoId: convoId, caller: caller)
            return try Row.fetchAll(try db.cachedStatement(sql: """
                SELECT seq, epoch, sender, message_type, hash, size, sent_at, record_name, commit_blob FROM messages
                WHERE convo_id = ? AND seq > ? ORDER BY seq LIMIT ?
                """),
                arguments: [convoId, sinceSeq, limit]
            ).map { row in
                MessageView(
                    seq: row["seq"], epoch: row["epoch"], sender: row["sender"],
                    messageType: MessageType(rawValue: row["message_type"]) ?? .app, hash: row["hash"], size: row["size"],
                    sentAt: StoreTime.date(row["sent_at"]), recordName: row["record_name"], commit: row["commit_blob"])
            }
        }
    }

    static func commitMessage(sender: String, epoch: Int, seq: Int, commit: Data, now: Date) -> MessageView {
        MessageView(
            seq: seq, epoch: epoch, sender: sender, messageType: .commit, hash: CommitDigest.hex(commit),
            size: commit.count, sentAt: now, recordName: nil)
    }

    /// Stores `message` and moves the convo to `advance` (its seq is `last_seq + 1`, checked by the caller).
    static func advance(
        _ db: Database, convoId: String, to advance: EpochAdvanceOutput, message: MessageView, commit: Data?,
        clientMessageId: String? = nil
    ) throws {
        try db.execute(
            cached: "UPDATE convos SET epoch = ?, last_seq = ? WHERE id = ?",
            arguments: [advance.epoch, advance.seq, convoId])
        try db.execute(
            cached: """
            INSERT INTO messages (convo_id, seq, epoch, sender, message_type, hash, size, sent_at, record_name, commit_blob, client_message_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            arguments: [
                convoId, message.seq, message.epoch, message.sender, message.messageType.rawValue, message.hash, message.size,
                StoreTime.millis(message.sentAt), message.recordName, commit, clientMessageId,
            ])
    }

    // MARK: Storage providers

    public func registerStorage(did: String, provider: StorageProvider) async throws {
        let json = try StoredStorageProvider.encode(provider)
        try await groupCommit.write { db in
            try db.execute(
                cached: "INSERT INTO storage_providers (did, provider) VALUES (?, ?) ON CONFLICT (did) DO UPDATE SET provider = excluded.provider",
                arguments: [did, json])
        }
    }

    static func recipientsWithStorage(_ db: Database, convoId: String) throws -> [(did: String, storage: StorageProvider)] {
        try Row.fetchAll(
            try db.cachedStatement(sql: """
                SELECT m.did, s.provider FROM members m LEFT JOIN storage_providers s ON s.did = m.did
                WHERE m.convo_id = ? AND m.active = 1 ORDER BY m.did
                """),
            arguments: [convoId]
        ).map { row in
            (row["did"], StoredStorageProvider.decode(row["provider"]))
        }
    }

    // MARK: Events

    /// Inserts event rows; returns their recipients, the keys to ring once the write commits.
    static func append(_ db: Database, events: [PendingEvent], now: Int64) throws -> [String] {
        for event in events {
            try db.execute(
                cached: "INSERT INTO event_payloads (convo_id, kind, payload, created_at) VALUES (?, ?, ?, ?)",
                arguments: [event.payload.convoId, event.kind, try event.encodedPayload(), now])
            let payload = db.lastInsertedRowID
            for recipient in Set(event.recipients).sorted() {
                try db.execute(cached: "INSERT INTO events (recipient, payload_id) VALUES (?, ?)", arguments: [recipient, payload])
            }
        }
        return PendingEvent.recipients(of: events)
    }

    public func purgeEvents(before cutoff: Date, limit: Int) async throws -> Int {
        try await groupCommit.write { db in
            let ids = try Int64.fetchAll(
                try db.cachedStatement(sql: "SELECT id FROM event_payloads WHERE created_at < ? ORDER BY created_at LIMIT ?"),
                arguments: [StoreTime.millis(cutoff), limit])
            for id in ids {
                try db.execute(cached: "DELETE FROM events WHERE payload_id = ?", arguments: [id])
                try db.execute(cached: "DELETE FROM event_payloads WHERE id = ?", arguments: [id])
            }
            return ids.count
        }
    }

    public func events(recipient: String, after: Int64, limit: Int) async throws -> [ConvoEvent] {
        try await pool.read { db in
            try Row.fetchAll(try db.cachedStatement(sql: """
                SELECT e.id, p.kind, p.payload FROM events e JOIN event_payloads p ON p.id = e.payload_id
                WHERE e.recipient = ? AND e.id > ? ORDER BY e.id LIMIT ?
                """),
                arguments: [recipient, after, limit]
            ).map { row in
                let payload: String = row["payload"]
                return ConvoEvent(cursor: row["id"], payload: try ConvoEventPayload(name: row["kind"], data: Data(payload.utf8)))
            }
        }
    }
}

extension Database {
    /// Executes one statement through GRDB's per-connection statement cache.
    func execute(cached sql: String, arguments: StatementArguments = []) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}
