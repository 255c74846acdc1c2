import Foundation
import ImprintDelivery
import Logging
import PostgresNIO

/// The PostgreSQL store (postgres-nio), for several stateless instances sharing one database.
///
/// Concurrency (READ COMMITTED):
/// - every seq/epoch change first locks the convo row (`SELECT … FOR UPDATE`), so seqs are
///   allocated one transaction at a time (gapless, unique) and exactly one of two commits
///   for the same epoch sees it unchanged; the other sees the new epoch and gets 409;
/// - a key package is published by one call of `imprint_publish_key_package` (count and
///   insert under a per-DID advisory lock, so a DID never holds more than the limit) and
///   taken with `DELETE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED)`,
///   so concurrent callers never get the same row;
/// - event rows are inserted under per-recipient advisory locks held until COMMIT
///   (`imprint_lock_event_recipients`), so each recipient's event ids become visible in id
///   order and a cursor never skips a late-committing event; after COMMIT a coalesced
///   `NOTIFY imprint_events` naming the recipients wakes their subscribers on every instance;
/// - `sendMessage`, the hot path, is one call of the `imprint_send_message` function: one
///   round trip that also records the token's jti (see `PostgresSchema`).
public final class PostgresDeliveryStore: DeliveryStore {
    static let notificationChannel = "imprint_events"
    static let migrationLockKey: Int64 = 0x1_4D50_5249_4E55
    /// Pool size (override with `?pool=N`). Each connection is a backend process competing for
    /// the same CPUs, so the pool stays small; but a request waiting for a busy convo's row lock
    /// holds its connection idle, so it must exceed the number of convos written at once.
    /// 16 on a 2-core machine: 4, 8 and 16 were within noise of each other in the benchmark.
    public static let defaultMaximumConnections = max(16, 8 * ProcessInfo.processInfo.activeProcessorCount)

    package let client: PostgresClient
    package let logger: Logger
    public let eventBell = EventBell()
    /// Fed by `NOTIFY imprint_ephemeral` (this instance's own relays included), so members
    /// connected to any instance get every instance's ephemeral messages.
    public let ephemeralHub = EphemeralHub()
    public var tokenReplayGuard: any TokenReplayGuard { replayGuard }
    let replayGuard: PostgresTokenReplayGuard
    let notifier: PostgresEventNotifier
    private let runTask: Task<Void, Never>
    private let listenerTask: Task<Void, Never>
    private let ephemeralListenerTask: Task<Void, Never>

    public init(location: DatabaseLocation.PostgresLocation, logger: Logger) {
        var configuration: PostgresClient.Configuration
        if let socket = location.socketDirectory {
            configuration = .init(
                unixSocketPath: socket + "/.s.PGSQL.\(location.port)", username: location.user,
                password: location.password, database: location.database)
        } else {
            configuration = .init(
                host: location.host, port: location.port, username: location.user, password: location.password,
                database: location.database, tls: .disable)
        }
        configuration.options.maximumConnections = location.poolSize ?? Self.defaultMaximumConnections
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.logger = logger
        replayGuard = PostgresTokenReplayGuard(client: client, logger: logger)
        notifier = PostgresEventNotifier(client: client, channel: Self.notificationChannel, logger: logger)
        runTask = Task { await client.run() }
        let bell = eventBell
        listenerTask = Self.listen(on: Self.notificationChannel, client: client, logger: logger) { notifications in
            bell.ringAll()  // anything written while we were not listening
            for try await notification in notifications {
                EventNotificationPayload(text: notification.payload).ring(bell)
            }
        }
        ephemeralListenerTask = Self.listenForEphemeralMessages(client: client, hub: ephemeralHub, logger: logger)
    }

    public func shutdown() async throws {
        eventBell.closeAll()
        ephemeralHub.closeAll()
        listenerTask.cancel()
        ephemeralListenerTask.cancel()
        await listenerTask.value
        await ephemeralListenerTask.value
        runTask.cancel()
        await runTask.value
    }

    /// BEGIN … COMMIT around `body`, rolling back and rethrowing its error unchanged.
    package func transaction<Result: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                let result = try await body(connection)
                try await connection.query("COMMIT", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    public func migrate() async throws {
        try await applyMigrations(PostgresSchema.migrations)
    }

    /// Applies the migrations not yet recorded in `schema_migrations`, in order, under the
    /// migration lock (so concurrent instances migrate once). Other modules sharing the
    /// database (the zone service) add theirs here with versions of their own range.
    package func applyMigrations(_ migrations: [(version: Int, statements: [String])]) async throws {
        try await transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLockKey))", logger: self.logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)",
                logger: self.logger)
            var applied = Set<Int>()
            for try await version in try await connection.query("SELECT version FROM schema_migrations", logger: self.logger).decode(Int.self) {
                applied.insert(version)
            }
            for migration in migrations where !applied.contains(migration.version) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                }
                try await connection.query(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (\(migration.version), \(StoreTime.millis(Date())))",
                    logger: self.logger)
            }
        }
    }

    // MARK: Key packages

    public func publishKeyPackage(_ package: NewKeyPackage) async throws -> String {
        let id = UUID().uuidString.lowercased()
        let now = StoreTime.millis(package.now)
        let expiresAt = StoreTime.millis(package.expiresAt)
        let limit = Int64(package.limit)
        let inserted = try await Self.single(Bool.self, client.query(
            """
            SELECT imprint_publish_key_package(\(id), \(package.did), \(package.cipherSuite), \(package.keyPackage),
                                               \(expiresAt), \(now), \(limit))
            """, logger: logger))
        guard inserted == true else { throw DeliveryError.tooManyKeyPackages(limit: package.limit) }
        return id
    }

    public func consumeKeyPackages(dids: [String], cipherSuite: Int?, now: Date) async throws -> [KeyPackageRef] {
        let nowMillis = StoreTime.millis(now)
        return try await client.withConnection { connection in
            var handedOut: [KeyPackageRef] = []
            for did in dids {
                let rows = try await connection.query(
                    """
                    DELETE FROM key_packages WHERE id = (
                        SELECT id FROM key_packages
                        WHERE did = \(did) AND expires_at > \(nowMillis) AND (\(cipherSuite)::BIGINT IS NULL OR cipher_suite = \(cipherSuite))
                        ORDER BY ordinal LIMIT 1
                        FOR UPDATE SKIP LOCKED)
                    RETURNING id, cipher_suite, key_package
                    """, logger: self.logger)
                for try await (id, suite, bytes) in rows.decode((String, Int, Data).self) {
                    handedOut.append(KeyPackageRef(did: did, id: id, cipherSuite: suite, keyPackage: bytes))
                }
            }
            return handedOut
        }
    }

    // MARK: Convos

    public func createConvo(_ convo: NewConvo) async throws -> ConvoView {
        try await transaction { connection in
            let now = StoreTime.millis(convo.now)
            let inserted = try await Self.single(String.self, connection.query(
                """
                INSERT INTO convos (id, creator, title, cipher_suite, epoch, last_seq, created_at)
                VALUES (\(convo.id), \(convo.creator), \(convo.title), \(convo.cipherSuite), 0, 0, \(now))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """, logger: self.logger))
            guard inserted != nil else { throw DeliveryError.convoExists(convo.id) }
            try await connection.query(
                "INSERT INTO members (convo_id, did, joined_at, active) VALUES (\(convo.id), \(convo.creator), \(now), TRUE)",
                logger: self.logger)
            try await self.replaceAdmins(connection, convoId: convo.id, creator: convo.creator, admins: convo.admins)
            return try await self.convoView(connection, id: convo.id)!
        }
    }

    public func convos(memberDID: String) async throws -> [ConvoView] {
        try await client.withConnection { connection in
            var ids: [String] = []
            for try await id in try await connection.query(
                """
                SELECT c.id FROM convos c JOIN members m ON m.convo_id = c.id
                WHERE m.did = \(memberDID) AND m.active ORDER BY c.created_at, c.id
                """, logger: self.logger
            ).decode(String.self) {
                ids.append(id)
            }
            var views: [ConvoView] = []
            for id in ids {
                if let view = try await self.convoView(connection, id: id) { views.append(view) }
            }
            return views
        }
    }

    public func setAdmins(convoId: String, caller: String, admins: [String]) async throws -> ConvoView {
        try await transaction { connection in
            _ = try await self.lockMemberConvo(connection, convoId: convoId, caller: caller)
            let creator = try await Self.single(String.self, connection.query(
                "SELECT creator FROM convos WHERE id = \(convoId)", logger: self.logger))
            guard creator == caller else { throw DeliveryError.forbidden("only the convo's creator may set its admins") }
            for did in admins where try await !self.isActiveMember(connection, convoId: convoId, did: did) {
                throw DeliveryError.invalidRequest("\(did) is not a member of convo \(convoId)")
            }
            try await self.replaceAdmins(connection, convoId: convoId, creator: caller, admins: admins)
            return try await self.convoView(connection, id: convoId)!
        }
    }

    func replaceAdmins(_ connection: PostgresConnection, convoId: String, creator: String, admins: [String]) async throws {
        try await connection.query("DELETE FROM convo_admins WHERE convo_id = \(convoId)", logger: logger)
        let named = admins.filter { $0 != creator }
        if !named.isEmpty {
            try await connection.query(
                "INSERT INTO convo_admins (convo_id, did) SELECT \(convoId), unnest(\(named)::TEXT[])", logger: logger)
        }
    }

    /// Throws `forbidden` unless `caller` is the convo's creator or one of its admins.
    func requireAdmin(_ connection: PostgresConnection, convoId: String, caller: String) async throws {
        let allowed = try await Self.single(Int.self, connection.query(
            """
            SELECT 1::BIGINT FROM convos WHERE id = \(convoId) AND creator = \(caller)
            UNION ALL SELECT 1::BIGINT FROM convo_admins WHERE convo_id = \(convoId) AND did = \(caller)
            """, logger: logger)) != nil
        guard allowed else { throw DeliveryError.forbidden("only the convo's creator and admins may change its members") }
    }

    func convoView(_ connection: PostgresConnection, id: String) async throws -> ConvoView? {
        var view: ConvoView?
        for try await (id, creator, title, suite, epoch, created) in try await connection.query(
            "SELECT id, creator, title, cipher_suite, epoch, created_at FROM convos WHERE id = \(id)", logger: logger
        ).decode((String, String, String?, Int, Int, Int64).self) {
            view = ConvoView(id: id, creator: creator, title: title, cipherSuite: suite, epoch: epoch, createdAt: StoreTime.date(created), members: [])
        }
        guard var view else { return nil }
        for try await (did, joined) in try await connection.query(
            "SELECT did, joined_at FROM members WHERE convo_id = \(id) AND active ORDER BY joined_at, did", logger: logger
        ).decode((String, Int64).self) {
            view.members.append(.init(did: did, joinedAt: StoreTime.date(joined)))
        }
        var admins = [view.creator]
        for try await did in try await connection.query(
            "SELECT did FROM convo_admins WHERE convo_id = \(id) ORDER BY did", logger: logger
        ).decode(String.self) {
            admins.append(did)
        }
        view.admins = admins
        return view
    }

    /// Locks the convo row (one round trip with the membership check); checks it exists and
    /// `caller` is active in it.
    func lockMemberConvo(_ connection: PostgresConnection, convoId: String, caller: String, forUpdate: Bool = true) async throws -> (epoch: Int, lastSeq: Int) {
        let query: PostgresQuery = forUpdate
            ? """
            SELECT c.epoch, c.last_seq,
                   EXISTS (SELECT 1 FROM members m WHERE m.convo_id = c.id AND m.did = \(caller) AND m.active)
            FROM convos c WHERE c.id = \(convoId) FOR UPDATE OF c
            """
            : """
            SELECT c.epoch, c.last_seq,
                   EXISTS (SELECT 1 FROM members m WHERE m.convo_id = c.id AND m.did = \(caller) AND m.active)
            FROM convos c WHERE c.id = \(convoId)
            """
        guard let current = try await Self.single((Int, Int, Bool).self, connection.query(query, logger: logger)) else {
            throw DeliveryError.convoNotFound(convoId)
        }
        guard current.2 else { throw DeliveryError.notMember(convoId) }
        return (current.0, current.1)
    }

    func isActiveMember(_ connection: PostgresConnection, convoId: String, did: String) async throws -> Bool {
        try await Self.single(Int.self, connection.query(
            "SELECT 1::BIGINT FROM members WHERE convo_id = \(convoId) AND did = \(did) AND active", logger: logger)) != nil
    }

    func activeMembers(_ connection: PostgresConnection, convoId: String) async throws -> [String] {
        var members: [String] = []
        for try await did in try await connection.query(
            "SELECT did FROM members WHERE convo_id = \(convoId) AND active ORDER BY did", logger: logger
        ).decode(String.self) {
            members.append(did)
        }
        return members
    }

    // MARK: Membership

    public func addMembers(_ change: MemberAddition) async throws -> EpochAdvanceOutput {
        let result = try await transaction { connection -> (output: EpochAdvanceOutput, recipients: [String]) in
            let current = try await self.lockMemberConvo(connection, convoId: change.convoId, caller: change.caller)
            try await self.requireAdmin(connection, convoId: change.convoId, caller: change.caller)
            guard current.epoch == change.epoch else { throw DeliveryError.epochMismatch(current: current.epoch) }
            if let member = try await Self.single(String.self, connection.query(
                "SELECT did FROM members WHERE convo_id = \(change.convoId) AND did = ANY(\(change.dids)::TEXT[]) AND active ORDER BY did LIMIT 1",
                logger: self.logger)) {
                throw DeliveryError.invalidRequest("\(member) is already a member")
            }
            let advance = EpochAdvanceOutput(epoch: current.epoch + 1, seq: current.lastSeq + 1)
            let now = StoreTime.millis(change.now)
            let message = SQLiteDeliveryStore.commitMessage(sender: change.caller, epoch: current.epoch, seq: advance.seq, commit: change.commit, now: change.now)
            try await self.advance(connection, convoId: change.convoId, to: advance, message: message, commit: change.commit)
            // One statement per table however many join, the Welcome's bytes stored once; a
            // new member needs nothing before the commit that adds it (v1.3 cursor).
            try await connection.query(
                """
                INSERT INTO members (convo_id, did, joined_at, active, processed_seq)
                SELECT \(change.convoId), d, \(now), TRUE, \(advance.seq) FROM unnest(\(change.dids)::TEXT[]) AS d
                ON CONFLICT (convo_id, did) DO UPDATE SET active = TRUE, has_left = FALSE, joined_at = excluded.joined_at,
                    processed_seq = excluded.processed_seq, cursor_at = NULL
                """, logger: self.logger)
            let replaced = try await connection.query(
                """
                WITH blob AS (
                    INSERT INTO welcome_blobs (convo_id, epoch, welcome) VALUES (\(change.convoId), \(advance.epoch), \(change.welcome))
                    RETURNING id
                ), old AS (
                    SELECT w.did, w.blob_id FROM welcomes w WHERE w.convo_id = \(change.convoId) AND w.did = ANY(\(change.dids)::TEXT[])
                ), upsert AS (
                    INSERT INTO welcomes (convo_id, did, blob_id)
                    SELECT \(change.convoId), d, blob.id FROM unnest(\(change.dids)::TEXT[]) AS d, blob
                    ON CONFLICT (convo_id, did) DO UPDATE SET blob_id = excluded.blob_id
                )
                SELECT DISTINCT blob_id FROM old
                """, logger: self.logger)
            var stale: [Int64] = []
            for try await blob in replaced.decode(Int64.self) { stale.append(blob) }
            try await self.dropWelcomeBlobsIfUnused(connection, stale)
            let members = try await self.activeMembers(connection, convoId: change.convoId)
            let events = PendingEvent.addition(convoId: change.convoId, commit: message, added: change.dids, members: members)
            return (advance, try await self.append(connection, events: events, now: now))
        }
        eventsCommitted(recipients: result.recipients)
        return result.output
    }

    public func removeMember(_ change: MemberRemoval) async throws -> EpochAdvanceOutput {
        let result = try await transaction { connection -> (output: EpochAdvanceOutput, recipients: [String]) in
            let current = try await self.lockMemberConvo(connection, convoId: change.convoId, caller: change.caller)
            let target = try await Self.single((Bool, Bool).self, connection.query(
                "SELECT active, has_left FROM members WHERE convo_id = \(change.convoId) AND did = \(change.did)", logger: self.logger))
            let active = target?.0 ?? false
            let departed = !active && (target?.1 ?? false)
            // A member who left is removed by whoever commits next; anyone else takes an admin.
            if !departed { try await self.requireAdmin(connection, convoId: change.convoId, caller: change.caller) }
            guard current.epoch == change.epoch else { throw DeliveryError.epochMismatch(current: current.epoch) }
            guard active || departed else {
                throw DeliveryError.notFound("\(change.did) is not a member of convo \(change.convoId)")
            }
            let advance = EpochAdvanceOutput(epoch: current.epoch + 1, seq: current.lastSeq + 1)
            let message = SQLiteDeliveryStore.commitMessage(sender: change.caller, epoch: current.epoch, seq: advance.seq, commit: change.commit, now: change.now)
            try await self.advance(connection, convoId: change.convoId, to: advance, message: message, commit: change.commit)
            try await connection.query(
                "UPDATE members SET active = FALSE, has_left = FALSE WHERE convo_id = \(change.convoId) AND did = \(change.did)", logger: self.logger)
            _ = try await self.deleteWelcome(connection, convoId: change.convoId, did: change.did)
            try await connection.query("DELETE FROM convo_admins WHERE convo_id = \(change.convoId) AND did = \(change.did)", logger: self.logger)
            let members = try await self.activeMembers(connection, convoId: change.convoId)
            return (advance, try await self.append(connection, events: [
                PendingEvent(payload: .message(MessageEvent(convoId: change.convoId, message: message)), recipients: members),
                PendingEvent(
                    payload: .membership(MembershipEvent(convoId: change.convoId, did: change.did, action: .removed)),
                    recipients: members + [change.did]),
            ], now: StoreTime.millis(change.now)))
        }
        eventsCommitted(recipients: result.recipients + [MembershipWatch.key(change.did)])
        return result.output
    }

    public func leaveConvo(convoId: String, did: String, now: Date) async throws {
        let recipients = try await transaction { connection in
            _ = try await self.lockMemberConvo(connection, convoId: convoId, caller: did)
            try await connection.query("UPDATE members SET active = FALSE, has_left = TRUE WHERE convo_id = \(convoId) AND did = \(did)", logger: self.logger)
            _ = try await self.deleteWelcome(connection, convoId: convoId, did: did)
            try await connection.query("DELETE FROM convo_admins WHERE convo_id = \(convoId) AND did = \(did)", logger: self.logger)
            let members = try await self.activeMembers(connection, convoId: convoId)
            return try await self.append(connection, events: [
                PendingEvent(payload: .membership(MembershipEvent(convoId: convoId, did: did, action: .left)), recipients: members + [did])
            ], now: StoreTime.millis(now))
        }
        eventsCommitted(recipients: recipients + [MembershipWatch.key(did)])
    }

    public func welcome(convoId: String, did: String) async throws -> GetWelcomeOutput? {
        try await Self.single((Data, Int).self, client.query(
            """
            SELECT b.welcome, b.epoch FROM welcomes w JOIN welcome_blobs b ON b.id = w.blob_id
            WHERE w.convo_id = \(convoId) AND w.did = \(did)
            """, logger: logger)
        ).map { GetWelcomeOutput(welcome: $0.0, epoch: $0.1) }
    }

    public func deleteWelcome(convoId: String, did: String) async throws {
        let deleted = try await transaction { connection in
            try await self.deleteWelcome(connection, convoId: convoId, did: did)
        }
        if !deleted { throw DeliveryError.noWelcome(convoId) }
    }

    /// Drops `did`'s reference to its Welcome in `convoId`, and the Welcome's bytes once no
    /// member references them. False when there was none.
    func deleteWelcome(_ connection: PostgresConnection, convoId: String, did: String) async throws -> Bool {
        guard let blob = try await Self.single(Int64.self, connection.query(
            "DELETE FROM welcomes WHERE convo_id = \(convoId) AND did = \(did) RETURNING blob_id", logger: logger))
        else { return false }
        try await dropWelcomeBlobsIfUnused(connection, [blob])
        return true
    }

    /// Deletes those of `blobs` that no member's Welcome references any more (after this
    /// transaction dropped references to them). The blob rows are locked first and checked in
    /// a statement of its own, which reads what committed while it waited: so of two
    /// transactions dropping the last two references of one Welcome, the second sees the
    /// first's and deletes the bytes, instead of both seeing the other's reference.
    func dropWelcomeBlobsIfUnused(_ connection: PostgresConnection, _ blobs: [Int64]) async throws {
        guard !blobs.isEmpty else { return }
        try await connection.query(
            "SELECT id FROM welcome_blobs WHERE id = ANY(\(blobs)::BIGINT[]) ORDER BY id FOR UPDATE", logger: logger)
        try await connection.query(
            """
            DELETE FROM welcome_blobs b WHERE b.id = ANY(\(blobs)::BIGINT[])
            AND NOT EXISTS (SELECT 1 FROM welcomes w WHERE w.blob_id = b.id)
            """, logger: logger)
    }

    // MARK: Messages

    /// One round trip: `imprint_send_message` admits the token, sequences the message and fans
    /// out its event in a single implicit transaction (see `PostgresSchema.sendMessageFunction`).
    public func sendMessage(_ input: NewMessage, admitting token: TokenAdmission) async throws -> SendMessageOutput {
        try await replayGuard.purgeExpiredIfDue(now: token.now)
        let statement = PostgresSendMessageStatement(
            replayKey: token.replayKey, replayExpiry: token.forgetAfter, nowSeconds: token.now,
            convoId: input.convoId, sender: input.sender, epoch: input.epoch, messageType: input.messageType.rawValue,
            hash: input.hash, size: input.size, recordName: input.recordName,
            sentAt: StoreTime.millis(input.now), sentAtText: RFC3339.string(from: input.now),
            clientMessageId: input.clientMessageId, commit: input.commit)
        var result: PostgresSendMessageStatement.Row?
        for try await row in try await client.execute(statement, logger: logger) where result == nil {
            result = row
        }
        guard let (outcome, epoch, seq, dids, providers) = result else {
            throw PostgresStoreError.noResult("imprint_send_message")
        }
        switch outcome {
        case "ok", "duplicate":
            guard let epoch, let seq, let dids, let providers, dids.count == providers.count else {
                throw PostgresStoreError.noResult("imprint_send_message")
            }
            // "ok": the roster is every DID the function stored the event for; a duplicate stored none.
            if outcome == "ok" { eventsCommitted(recipients: dids) }
            var recipients: [Recipient] = []
            recipients.reserveCapacity(dids.count)
            for (did, provider) in zip(dids, providers) where did != input.sender {
                recipients.append(Recipient(did: did, storage: StoredStorageProvider.decode(provider.isEmpty ? nil : provider)))
            }
            return SendMessageOutput(seq: seq, epoch: epoch, recipients: recipients, serverTime: input.now)
        case "replayed": throw DeliveryError.tokenReplayed()
        case "convo_not_found": throw DeliveryError.convoNotFound(input.convoId)
        case "not_member": throw DeliveryError.notMember(input.convoId)
        case "epoch_mismatch": throw DeliveryError.epochMismatch(current: epoch ?? 0)
        case "client_id_reused": throw DeliveryError.clientMessageIdReused(input.clientMessageId ?? "")
        default: throw PostgresStoreError.noResult("imprint_send_message: \(outcome)")
        }
    }

    public func messages(convoId: String, caller: String, sinceSeq: Int, limit: Int) async throws -> [MessageView] {
        try await client.withConnection { connection in
            _ = try await self.lockMemberConvo(connection, convoId: convoId, caller: caller, forUpdate: false)
            var messages: [MessageView] = []
            for try await (seq, epoch, sender, type, hash, size, sentAt, recordName, commit) in try await connection.query(
                """
                SELECT seq, epoch, sender, message_type, hash, size, sent_at, record_name, commit_blob FROM messages
                WHERE convo_id = \(convoId) AND seq > \(sinceSeq) ORDER BY seq LIMIT \(limit)
                """, logger: self.logger
            ).decode((Int, Int, String, String, String, Int, Int64, String?, Data?).self) {
                messages.append(MessageView(
                    seq: seq, epoch: epoch, sender: sender, messageType: MessageType(rawValue: type) ?? .app, hash: hash,
                    size: size, sentAt: StoreTime.date(sentAt), recordName: recordName, commit: commit))
            }
            return messages
        }
    }

    func advance(_ connection: PostgresConnection, convoId: String, to advance: EpochAdvanceOutput, message: MessageView, commit: Data?) async throws {
        try await connection.query(
            """
            WITH bumped AS (UPDATE convos SET epoch = \(advance.epoch), last_seq = \(advance.seq) WHERE id = \(convoId))
            INSERT INTO messages (convo_id, seq, epoch, sender, message_type, hash, size, sent_at, record_name, commit_blob)
            VALUES (\(convoId), \(message.seq), \(message.epoch), \(message.sender), \(message.messageType.rawValue), \(message.hash),
                    \(message.size), \(StoreTime.millis(message.sentAt)), \(message.recordName), \(commit))
            """, logger: logger)
    }

    // MARK: Storage providers

    public func registerStorage(did: String, provider: StorageProvider) async throws {
        let json = try StoredStorageProvider.encode(provider)
        try await client.query(
            """
            INSERT INTO storage_providers (did, provider) VALUES (\(did), \(json))
            ON CONFLICT (did) DO UPDATE SET provider = excluded.provider
            """, logger: logger)
    }

    // MARK: Events

    /// Inserts event rows, after `imprint_lock_event_recipients` locked every recipient (held
    /// to COMMIT) so each recipient's ids commit in order. Call it once per transaction.
    /// Returns the recipients, the keys to ring once the transaction commits.
    func append(_ connection: PostgresConnection, events: [PendingEvent], now: Int64) async throws -> [String] {
        let everyone = PendingEvent.recipients(of: events)
        try await connection.query("SELECT imprint_lock_event_recipients(\(everyone)::TEXT[])", logger: logger)
        if events.count == 1, let event = events.first {
            let recipients = Set(event.recipients).sorted()
            try await connection.query(
                """
                WITH stored AS (
                    INSERT INTO event_payloads (convo_id, kind, payload, created_at)
                    VALUES (\(event.payload.convoId), \(event.kind), \(try event.encodedPayload()), \(now)) RETURNING id
                )
                INSERT INTO events (recipient, payload_id)
                SELECT u.r, stored.id FROM stored, unnest(\(recipients)::TEXT[]) WITH ORDINALITY AS u (r, n) ORDER BY u.n
                """, logger: logger)
            return everyone
        }
        // Several events (an `addMembers` of n members writes 2n + 1): three round trips in
        // all instead of one per event. Payload ids are drawn first, ascending in event order.
        var ids: [Int64] = []
        for try await id in try await connection.query(
            "SELECT nextval(pg_get_serial_sequence('event_payloads', 'id')) FROM generate_series(1, \(events.count))", logger: logger
        ).decode(Int64.self) {
            ids.append(id)
        }
        ids.sort()
        guard ids.count == events.count else { throw PostgresStoreError.noResult("drew \(ids.count) event payload ids for \(events.count) events") }
        let convos = events.map(\.payload.convoId), kinds = events.map(\.kind)
        let payloads = try events.map { try $0.encodedPayload() }
        try await connection.query(
            """
            INSERT INTO event_payloads (id, convo_id, kind, payload, created_at)
            SELECT u.id, u.convo, u.kind, u.payload, \(now)
            FROM unnest(\(ids)::BIGINT[], \(convos)::TEXT[], \(kinds)::TEXT[], \(payloads)::TEXT[]) AS u (id, convo, kind, payload)
            """, logger: logger)
        var recipients: [String] = [], references: [Int64] = []
        for (event, id) in zip(events, ids) {
            for recipient in Set(event.recipients).sorted() {
                recipients.append(recipient)
                references.append(id)
            }
        }
        // Event ids are drawn in the array's order, so each recipient's events stay in order.
        try await connection.query(
            """
            INSERT INTO events (recipient, payload_id)
            SELECT u.r, u.p FROM unnest(\(recipients)::TEXT[], \(references)::BIGINT[]) WITH ORDINALITY AS u (r, p, n) ORDER BY u.n
            """, logger: logger)
        return everyone
    }

    /// After a transaction that wrote events for `recipients` committed: wake their subscribers
    /// on this instance now and on the other instances through a coalesced NOTIFY.
    package func eventsCommitted(recipients: [String]) {
        eventBell.ring(recipients: recipients)
        notifier.signal(recipients: recipients)
    }

    public func purgeEvents(before cutoff: Date, limit: Int) async throws -> Int {
        var purged = 0
        for try await _ in try await client.query(
            """
            WITH old AS (SELECT id FROM event_payloads WHERE created_at < \(StoreTime.millis(cutoff)) ORDER BY created_at LIMIT \(limit)),
            rows AS (DELETE FROM events WHERE payload_id IN (SELECT id FROM old))
            DELETE FROM event_payloads WHERE id IN (SELECT id FROM old) RETURNING id
            """, logger: logger
        ).decode(Int64.self) {
            purged += 1
        }
        return purged
    }

    public func events(recipient: String, after: Int64, limit: Int) async throws -> [ConvoEvent] {
        var events: [ConvoEvent] = []
        for try await (id, kind, payload) in try await client.query(
            """
            SELECT e.id, p.kind, p.payload FROM events e JOIN event_payloads p ON p.id = e.payload_id
            WHERE e.recipient = \(recipient) AND e.id > \(after) ORDER BY e.id LIMIT \(limit)
            """,
            logger: logger
        ).decode((Int64, String, String).self) {
            events.append(ConvoEvent(cursor: id, payload: try ConvoEventPayload(name: kind, data: Data(payload.utf8))))
        }
        return events
    }

    /// The first row of a result (the rest are read and dropped so the connection stays clean).
    package static func single<each Column: PostgresDecodable & Sendable>(
        _ type: (repeat each Column).Type, _ rows: PostgresRowSequence
    ) async throws -> (repeat each Column)? {
        var first: (repeat each Column)?
        for try await row in rows.decode((repeat each Column).self) where first == nil {
            first = row
        }
        return first
    }
}
