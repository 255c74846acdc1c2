import Foundation
import Hummingbird
import ImprintServer
import Logging
import NIOCore
import PostgresNIO

/// The zone service on the Delivery Service's PostgreSQL database, blobs in the database, so
/// that any number of stateless instances serve the same zones.
///
/// Ordering (READ COMMITTED): a zone's change numbers are drawn from its `zones.last_change`
/// under the zone row's lock (`SELECT … FOR UPDATE`), held until COMMIT, exactly as the
/// Delivery Service draws a convo's message seqs under the convo row's lock. So the changes
/// of one zone commit in number order: when a reader sees change `n`, every change `< n` of
/// that zone is already committed and visible, and `fetchChanges(since: n)` can never skip a
/// transaction that commits late. (A global sequence would not do: two transactions draw 5
/// and 6, 6 commits, a reader's token passes 6, then 5 commits behind it.)
///
/// Other locks, always taken in this order after the zone row, so they cannot deadlock:
/// `FOR KEY SHARE` on the Delivery Service messages a `change`/`commit` record names, the
/// advisory lock of each blob hash placed (also taken by uploads and by garbage collection,
/// so a blob is never removed while an upload of it is recorded), then the owner's advisory
/// lock around the quota check. After COMMIT the zone's key rings the shared `EventBell` and a
/// coalesced `NOTIFY` wakes subscribers on the other instances (the Delivery Service's notifier).
final class PostgresZoneServiceStore: ZoneServiceStore {
    let delivery: PostgresDeliveryStore
    let stagingDirectory: URL
    /// Uploads are copied into `zone_blob_chunks`; the COMMIT makes them durable.
    var keepsStagedFiles: Bool { false }
    var bell: EventBell { delivery.eventBell }
    var logger: Logger { delivery.logger }

    init(delivery: PostgresDeliveryStore, dataDirectory: URL) {
        self.delivery = delivery
        stagingDirectory = dataDirectory.appendingPathComponent("zone-staging", isDirectory: true)
    }

    func migrate() async throws {
        try await delivery.applyMigrations(ZonePostgresSchema.migrations)
    }

    func shutdown() async throws {}

    func changed(_ zoneId: String) {
        delivery.eventsCommitted(recipients: [ZoneEvents.key(zoneId)])
    }

    func transaction<Result: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await delivery.transaction(body)
    }

    func single<each Column: PostgresDecodable & Sendable>(
        _ type: (repeat each Column).Type, _ connection: PostgresConnection, _ query: PostgresQuery
    ) async throws -> (repeat each Column)? {
        try await PostgresDeliveryStore.single(type, connection.query(query, logger: logger))
    }

    // MARK: Facts

    func zone(_ connection: PostgresConnection, _ zoneId: String, lock: Bool) async throws -> ZoneRow? {
        let query: PostgresQuery = lock
            ? "SELECT kind, owner, convo_id, incarnation, last_change, purged_through, created_at FROM zones WHERE zone_id = \(zoneId) FOR UPDATE"
            : "SELECT kind, owner, convo_id, incarnation, last_change, purged_through, created_at FROM zones WHERE zone_id = \(zoneId)"
        guard let (kind, owner, convoId, incarnation, lastChange, purgedThrough, createdAt) = try await single(
            (String, String, String?, String, Int64, Int64, Int64).self, connection, query)
        else { return nil }
        return ZoneRow(
            zoneId: zoneId, kind: ZoneID.Kind(rawValue: kind) ?? .shared, owner: owner, convoId: convoId, incarnation: incarnation,
            lastChange: lastChange, purgedThrough: purgedThrough, createdAt: StoreTime.date(createdAt))
    }

    func answer(_ connection: PostgresConnection, _ question: ZoneRules.RosterQuestion?) async throws -> Bool {
        switch question {
        case nil: return false
        case .activeMember(let convoId, let did):
            return try await single(Int.self, connection, "SELECT 1::BIGINT FROM members WHERE convo_id = \(convoId) AND did = \(did) AND active") != nil
        case .inboxWriter(let did, let owner, let zoneId, let capabilityHash):
            if let capabilityHash, try await single(Int.self, connection, """
                SELECT 1::BIGINT FROM inbox_capabilities WHERE zone_id = \(zoneId) AND key_hash = \(capabilityHash)
                """) != nil {
                return true
            }
            return try await single(Int.self, connection, """
                SELECT 1::BIGINT FROM members a JOIN members b ON a.convo_id = b.convo_id
                WHERE a.did = \(did) AND a.active AND b.did = \(owner) AND b.active LIMIT 1
                """) != nil
        }
    }

    func authorized(_ connection: PostgresConnection, _ zone: ZoneID, caller: String, _ access: ZoneRules.Access, lock: Bool = false,
                    inboxCapability: String? = nil) async throws -> ZoneRow {
        guard let row = try await self.zone(connection, zone.raw, lock: lock) else { throw DeliveryError.zoneNotFound(zone.raw) }
        let answer = try await answer(connection, ZoneRules.rosterQuestion(access, zone: row, caller: caller, inboxCapability: inboxCapability))
        try ZoneRules.check(access, zone: row, caller: caller, rosterAnswer: answer)
        return row
    }

    static let recordColumns = "record_name, record_type, fields, asset_hash, asset_size, saved_by, change, saved_at, deleted, expires_at, comment_key_hash"
    typealias RecordColumns = (String, String, String, String?, Int?, String?, Int64, Int64, Bool, Int64?, String?)

    static func recordRow(_ columns: RecordColumns) -> RecordRow {
        let (name, type, fields, hash, size, savedBy, change, savedAt, deleted, expiresAt, commentKeyHash) = columns
        return RecordRow(
            name: name, type: type, fieldsJSON: fields, assetHash: hash, assetSize: size, savedBy: savedBy, change: change,
            savedAt: StoreTime.date(savedAt), deleted: deleted, expiresAt: expiresAt.map(StoreTime.date), commentKeyHash: commentKeyHash)
    }

    func records(_ connection: PostgresConnection, _ query: PostgresQuery) async throws -> [RecordRow] {
        var rows: [RecordRow] = []
        for try await columns in try await connection.query(query, logger: logger).decode(RecordColumns.self) {
            rows.append(Self.recordRow(columns))
        }
        return rows
    }

    func record(_ connection: PostgresConnection, zoneId: String, name: String) async throws -> RecordRow? {
        try await records(connection, "SELECT \(unescaped: Self.recordColumns) FROM zone_records WHERE zone_id = \(zoneId) AND record_name = \(name)").first
    }

    func ownerBytes(_ connection: PostgresConnection, owner: String) async throws -> Int {
        try await single(Int.self, connection, "SELECT COALESCE(SUM(bytes), 0)::BIGINT FROM zones WHERE owner = \(owner)") ?? 0
    }

    // MARK: Blobs

    /// Stores `staged` as blob `staged.hash` unless it exists, under the hash's advisory lock
    /// (held to COMMIT); reads the file a chunk at a time and inserts up to
    /// `ZonePostgresSchema.chunksPerStatement` chunks per statement (one round trip per MiB).
    func place(_ connection: PostgresConnection, _ staged: StagedAsset) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(\(ZonePostgresSchema.blobLockSpace), hashtext(\(staged.hash)))", logger: logger)
        guard try await single(Int.self, connection, "SELECT 1::BIGINT FROM zone_blobs WHERE hash = \(staged.hash)") == nil else { return }
        guard let file = FileHandle(forReadingAtPath: staged.path) else { throw AssetFileError(operation: "open", path: staged.path, code: ENOENT) }
        defer { try? file.close() }
        var index = 0
        var atEnd = false
        while !atEnd {
            var binds = PostgresBindings()
            binds.append(staged.hash)
            var rows: [String] = []
            while rows.count < ZonePostgresSchema.chunksPerStatement {
                guard let chunk = try file.read(upToCount: ZonePostgresSchema.chunkSize), !chunk.isEmpty else {
                    atEnd = true
                    break
                }
                binds.append(index)
                try binds.append(chunk)
                rows.append("($1, $\(binds.count - 1), $\(binds.count))")
                index += 1
            }
            guard !rows.isEmpty else { break }
            try await connection.query(PostgresQuery(
                unsafeSQL: "INSERT INTO zone_blob_chunks (hash, idx, bytes) VALUES \(rows.joined(separator: ", ")) ON CONFLICT DO NOTHING",
                binds: binds), logger: logger)
        }
        try await connection.query("INSERT INTO zone_blobs (hash, size) VALUES (\(staged.hash), \(staged.size))", logger: logger)
    }

    /// Removes the blobs of `hashes` no record and no pending upload references.
    func collect(_ hashes: [String]) async throws {
        guard !hashes.isEmpty else { return }
        try await transaction { connection in
            for hash in Set(hashes).sorted() {
                try await connection.query("SELECT pg_advisory_xact_lock(\(ZonePostgresSchema.blobLockSpace), hashtext(\(hash)))", logger: self.logger)
                let referenced = try await self.single(Int.self, connection, """
                    SELECT 1::BIGINT WHERE EXISTS (SELECT 1 FROM zone_records WHERE asset_hash = \(hash))
                                        OR EXISTS (SELECT 1 FROM zone_uploads WHERE hash = \(hash))
                    """) != nil
                if !referenced {
                    try await connection.query("DELETE FROM zone_blob_chunks WHERE hash = \(hash)", logger: self.logger)
                    try await connection.query("DELETE FROM zone_blobs WHERE hash = \(hash)", logger: self.logger)
                }
            }
        }
    }

    func writeAsset<Writer: ResponseBodyWriter>(hash: String, range: Range<Int>, to writer: inout Writer) async throws {
        let chunk = ZonePostgresSchema.chunkSize
        var offset = range.lowerBound
        while offset < range.upperBound {
            let index = offset / chunk
            var bytes: ByteBuffer?
            for try await value in try await delivery.client.query(
                "SELECT bytes FROM zone_blob_chunks WHERE hash = \(hash) AND idx = \(index)", logger: logger
            ).decode(ByteBuffer.self) where bytes == nil {
                bytes = value
            }
            guard var bytes else { throw AssetFileError(operation: "read chunk \(index)", path: hash, code: ENOENT) }
            let start = offset - index * chunk
            let end = min(bytes.readableBytes, range.upperBound - index * chunk)
            guard start < end, let slice = bytes.getSlice(at: bytes.readerIndex + start, length: end - start) else {
                throw AssetFileError(operation: "read chunk \(index) (short)", path: hash, code: EIO)
            }
            bytes = slice
            offset += bytes.readableBytes
            try await writer.write(bytes)
        }
    }

    // MARK: Zones

    func createZone(_ zone: ZoneID, convoId: String?, caller: String, now: Date) async throws -> ZoneView {
        if let convoId, zone.kind != .shared || convoId != zone.subject {
            throw DeliveryError.invalidRequest("convoId must be the convo of a doc_<convoId> zone")
        }
        return try await transaction { connection in
            var member: Bool?
            if zone.kind == .shared, try await self.single(Int.self, connection, "SELECT 1::BIGINT FROM convos WHERE id = \(zone.subject)") != nil {
                member = try await self.answer(connection, .activeMember(convoId: zone.subject, did: caller))
            }
            try ZoneRules.checkCreate(zone, caller: caller, convoMember: member)
            let row = ZoneRow(
                zoneId: zone.raw, kind: zone.kind, owner: caller, convoId: zone.kind == .shared ? zone.subject : nil,
                incarnation: ZoneRules.newIncarnation(), lastChange: 0, purgedThrough: 0, createdAt: now)
            let inserted = try await self.single(String.self, connection, """
                INSERT INTO zones (zone_id, kind, owner, convo_id, incarnation, last_change, purged_through, records, bytes, created_at)
                VALUES (\(row.zoneId), \(row.kind.rawValue), \(row.owner), \(row.convoId), \(row.incarnation), 0, 0, 0, 0, \(StoreTime.millis(now)))
                ON CONFLICT (zone_id) DO NOTHING RETURNING zone_id
                """)
            guard inserted != nil else { throw DeliveryError.zoneExists(zone.raw) }
            return row.view
        }
    }

    func deleteZone(_ zone: ZoneID, caller: String) async throws {
        let hashes = try await transaction { connection -> [String] in
            guard let row = try await self.zone(connection, zone.raw, lock: true) else { throw DeliveryError.zoneNotFound(zone.raw) }
            var creatorOfEmptyConvo = false
            if let convoId = row.convoId {
                let creator = try await self.single(String.self, connection, "SELECT creator FROM convos WHERE id = \(convoId)")
                let active = try await self.single(Int.self, connection, "SELECT COUNT(*)::BIGINT FROM members WHERE convo_id = \(convoId) AND active") ?? 0
                creatorOfEmptyConvo = creator == caller && active == 0
            }
            try ZoneRules.checkDeleteZone(row, caller: caller, creatorOfEmptyConvo: creatorOfEmptyConvo)
            var hashes: [String] = []
            for try await hash in try await connection.query("""
                SELECT asset_hash FROM zone_records WHERE zone_id = \(zone.raw) AND asset_hash IS NOT NULL
                UNION SELECT hash FROM zone_uploads WHERE zone_id = \(zone.raw)
                """, logger: self.logger).decode(String.self) {
                hashes.append(hash)
            }
            try await connection.query("DELETE FROM zone_records WHERE zone_id = \(zone.raw)", logger: self.logger)
            try await connection.query("DELETE FROM zone_uploads WHERE zone_id = \(zone.raw)", logger: self.logger)
            try await connection.query("DELETE FROM inbox_capabilities WHERE zone_id = \(zone.raw)", logger: self.logger)
            try await connection.query("DELETE FROM zones WHERE zone_id = \(zone.raw)", logger: self.logger)
            return hashes
        }
        changed(zone.raw)
        try await collect(hashes)
    }

    // MARK: Assets

    func putInboxCapability(_ zone: ZoneID, caller: String, name: String, keyHash: String?, limit: Int, now: Date) async throws {
        try await transaction { connection in
            guard let row = try await self.zone(connection, zone.raw, lock: true) else { throw DeliveryError.zoneNotFound(zone.raw) }
            try ZoneRules.checkPutInboxCapability(row, caller: caller)
            guard let keyHash else {
                try await connection.query("DELETE FROM inbox_capabilities WHERE zone_id = \(zone.raw) AND name = \(name)", logger: self.logger)
                return
            }
            let others = try await self.single(Int.self, connection, """
                SELECT COUNT(*)::BIGINT FROM inbox_capabilities WHERE zone_id = \(zone.raw) AND name <> \(name)
                """) ?? 0
            guard others < limit else { throw DeliveryError.forbidden("inbox \(zone.raw) holds \(limit) write capabilities already") }
            try await connection.query("""
                INSERT INTO inbox_capabilities (zone_id, name, key_hash, updated_at) VALUES (\(zone.raw), \(name), \(keyHash), \(StoreTime.millis(now)))
                ON CONFLICT (zone_id, name) DO UPDATE SET key_hash = excluded.key_hash, updated_at = excluded.updated_at
                """, logger: self.logger)
        }
    }

    func admitUpload(_ zone: ZoneID, caller: String, inboxCapability: String?, size: Int, quota: Int) async throws {
        try await delivery.client.withConnection { connection in
            let row = try await self.authorized(connection, zone, caller: caller, .write, inboxCapability: inboxCapability)
            guard try await self.ownerBytes(connection, owner: row.owner) + size <= quota else { throw DeliveryError.quotaExceeded(quota: quota) }
        }
    }

    func commitUpload(_ zone: ZoneID, caller: String, inboxCapability: String?, staged: StagedAsset, quota: Int, now: Date) async throws {
        defer { staged.discard() }
        try await transaction { connection in
            let row = try await self.authorized(connection, zone, caller: caller, .write, inboxCapability: inboxCapability)
            guard try await self.ownerBytes(connection, owner: row.owner) + staged.size <= quota else { throw DeliveryError.quotaExceeded(quota: quota) }
            try await self.place(connection, staged)
            try await connection.query("""
                INSERT INTO zone_uploads (zone_id, hash, size, uploaded_by, uploaded_at)
                VALUES (\(zone.raw), \(staged.hash), \(staged.size), \(caller), \(StoreTime.millis(now)))
                ON CONFLICT (zone_id, hash) DO NOTHING
                """, logger: self.logger)
        }
    }

    func readableAsset(_ zone: ZoneID, reader: ZoneReader, hash: String, now: Date) async throws -> ZoneAssetRef {
        try await delivery.client.withConnection { connection in
            switch reader {
            case .did(let did):
                _ = try await self.authorized(connection, zone, caller: did, .read)
                guard let size = try await self.single(Int.self, connection, """
                    SELECT asset_size FROM zone_records WHERE zone_id = \(zone.raw) AND asset_hash = \(hash) AND NOT deleted LIMIT 1
                    """)
                else { throw DeliveryError.assetNotFound(hash) }
                return ZoneAssetRef(hash: hash, size: size)
            case .snapshotCapability(let name):
                guard zone.kind == .snapshot, try await self.zone(connection, zone.raw, lock: false) != nil else {
                    throw DeliveryError.zoneNotFound(zone.raw)
                }
                let record = try ZoneRules.checkSnapshotCapability(try await self.record(connection, zoneId: zone.raw, name: name), now: now)
                guard record.assetHash == hash, let size = record.assetSize else { throw DeliveryError.assetNotFound(hash) }
                return ZoneAssetRef(hash: hash, size: size)
            }
        }
    }

    // MARK: Records

    func saveRecords(_ batch: RecordBatch) async throws -> [ZoneRecord] {
        defer { for save in batch.records { save.inline?.discard() } }
        let result = try await transaction { connection -> (records: [ZoneRecord], wrote: Bool) in
            let zone: ZoneRow
            switch batch.writer {
            case .did(let did):
                zone = try await self.authorized(connection, batch.zone, caller: did, .write, lock: true,
                                                 inboxCapability: batch.inboxCapability)
            case .commentCapability(let snapshotName, let capabilityHash):
                guard let row = try await self.zone(connection, batch.zone.raw, lock: true) else { throw DeliveryError.zoneNotFound(batch.zone.raw) }
                zone = row
                let snapshot = try ZoneRules.checkSnapshotCapability(
                    try await self.record(connection, zoneId: zone.zoneId, name: snapshotName), now: batch.now)
                guard snapshot.commentKeyHash == capabilityHash else { throw DeliveryError.forbidden("wrong comment capability") }
            }
            var decisions: [ZoneRules.SaveDecision] = []
            var writes: [RecordSave] = []
            for save in batch.records {
                let decision = try ZoneRules.decide(save, existing: try await self.record(connection, zoneId: zone.zoneId, name: save.name))
                decisions.append(decision)
                guard case .write = decision else { continue }
                if let asset = save.asset {
                    let uploaded = try await self.single(Int.self, connection, """
                        SELECT size FROM zone_uploads WHERE zone_id = \(zone.zoneId) AND hash = \(asset.hash)
                        UNION ALL SELECT asset_size FROM zone_records WHERE zone_id = \(zone.zoneId) AND asset_hash = \(asset.hash) AND NOT deleted
                        LIMIT 1
                        """)
                    guard uploaded == asset.size else {
                        throw DeliveryError.invalidRequest("asset \(asset.hash) of \(save.name) was not uploaded to this zone with that size")
                    }
                }
                if ZoneRules.needsMessageCheck(save, zone: zone) {
                    let key = try ZoneRules.messageKey(save, zone: zone)
                    let message = try await self.single((String, String).self, connection, """
                        SELECT sender, hash FROM messages WHERE convo_id = \(key.convoId) AND seq = \(key.seq) FOR KEY SHARE
                        """).map { (sender: $0.0, hash: $0.1) }
                    try ZoneRules.checkMessage(save, caller: batch.writer.did ?? "", payloadHash: key.payloadHash, message: message)
                }
                writes.append(save)
            }
            for staged in writes.compactMap(\.inline).sorted(by: { $0.hash < $1.hash }) {
                try await self.place(connection, staged)
            }
            let added = ZoneRules.added(writes)
            if added.bytes > 0 {
                try await connection.query("SELECT pg_advisory_xact_lock(\(ZonePostgresSchema.ownerLockSpace), hashtext(\(zone.owner)))", logger: self.logger)
                guard try await self.ownerBytes(connection, owner: zone.owner) + added.bytes <= batch.quota else {
                    throw DeliveryError.quotaExceeded(quota: batch.quota)
                }
            }
            var change = zone.lastChange
            var saved: [String: ZoneRecord] = [:]
            for save in writes {
                change += 1
                let asset = save.asset ?? save.inline.map { ZoneAssetRef(hash: $0.hash, size: $0.size) }
                let savedBy = batch.writer.did
                try await connection.query("""
                    INSERT INTO zone_records (zone_id, record_name, record_type, fields, asset_hash, asset_size, saved_by,
                        change, saved_at, deleted, epoch, seq, expires_at, comment_key_hash)
                    VALUES (\(zone.zoneId), \(save.name), \(save.type), \(save.fieldsJSON), \(asset?.hash), \(asset?.size), \(savedBy),
                        \(change), \(StoreTime.millis(batch.now)), FALSE, \(save.routing.epoch), \(save.routing.seq),
                        \(save.routing.expiresAt.map(StoreTime.millis)), \(save.routing.commentKeyHash))
                    ON CONFLICT (zone_id, record_name) DO UPDATE SET
                        record_type = excluded.record_type, fields = excluded.fields, asset_hash = excluded.asset_hash,
                        asset_size = excluded.asset_size, saved_by = excluded.saved_by, change = excluded.change,
                        saved_at = excluded.saved_at, deleted = FALSE, epoch = excluded.epoch, seq = excluded.seq,
                        expires_at = excluded.expires_at, comment_key_hash = excluded.comment_key_hash
                    """, logger: self.logger)
                if let asset {
                    try await connection.query("DELETE FROM zone_uploads WHERE zone_id = \(zone.zoneId) AND hash = \(asset.hash)", logger: self.logger)
                }
                saved[save.name] = ZoneRecord(
                    recordName: save.name, recordType: save.type, fields: save.fields, asset: asset,
                    changeToken: ChangeToken(incarnation: zone.incarnation, change: change).text, savedAt: batch.now, deleted: false)
            }
            if !writes.isEmpty {
                try await connection.query("""
                    UPDATE zones SET last_change = \(change), records = records + \(added.records), bytes = bytes + \(added.bytes)
                    WHERE zone_id = \(zone.zoneId)
                    """, logger: self.logger)
            }
            let records = zip(batch.records, decisions).map { save, decision -> ZoneRecord in
                if case .unchanged(let row) = decision { return row.record(incarnation: zone.incarnation) }
                return saved[save.name]!
            }
            return (records, !writes.isEmpty)
        }
        if result.wrote { changed(batch.zone.raw) }
        return result.records
    }

    func deleteRecords(_ zone: ZoneID, caller: String, names: [String], now: Date, tombstoneRetention: Int64) async throws -> [String] {
        let (deleted, hashes) = try await transaction { connection -> ([String], [String]) in
            let row = try await self.authorized(connection, zone, caller: caller, .deleteRecords, lock: true)
            var deleted: [String] = []
            var hashes: [String] = []
            var change = row.lastChange
            var bytes = 0
            for name in names {
                guard let record = try await self.record(connection, zoneId: row.zoneId, name: name), !record.deleted else { continue }
                if row.kind == .shared, record.savedBy != caller {
                    throw DeliveryError.forbidden("a member deletes only records it saved; \(name) is another's")
                }
                change += 1
                bytes += record.assetSize ?? 0
                if let hash = record.assetHash { hashes.append(hash) }
                try await connection.query("""
                    UPDATE zone_records SET deleted = TRUE, fields = '{}', asset_hash = NULL, asset_size = NULL, change = \(change),
                        saved_at = \(StoreTime.millis(now)), epoch = NULL, seq = NULL, expires_at = NULL, comment_key_hash = NULL
                    WHERE zone_id = \(row.zoneId) AND record_name = \(name)
                    """, logger: self.logger)
                deleted.append(name)
            }
            let horizon = StoreTime.millis(now) - tombstoneRetention * 1000
            let purged = try await self.single(Int64?.self, connection, """
                SELECT MAX(change) FROM zone_records WHERE zone_id = \(row.zoneId) AND deleted AND saved_at < \(horizon)
                """) ?? nil
            if let purged {
                try await connection.query("DELETE FROM zone_records WHERE zone_id = \(row.zoneId) AND deleted AND change <= \(purged)", logger: self.logger)
            }
            try await connection.query("""
                UPDATE zones SET last_change = \(change), records = records - \(deleted.count), bytes = bytes - \(bytes),
                    purged_through = GREATEST(purged_through, \(purged ?? 0))
                WHERE zone_id = \(row.zoneId)
                """, logger: self.logger)
            return (deleted, hashes)
        }
        if !deleted.isEmpty { changed(zone.raw) }
        try await collect(hashes)
        return deleted
    }

    func changes(_ zone: ZoneID, caller: String, since: String?, limit: Int) async throws -> FetchChangesOutput {
        try await delivery.client.withConnection { connection in
            let row = try await self.authorized(connection, zone, caller: caller, .read)
            let start = try ZoneChangeFeed.start(since, zone: row)
            let rows = try await self.records(connection, """
                SELECT \(unescaped: Self.recordColumns) FROM zone_records WHERE zone_id = \(row.zoneId) AND change > \(start)
                ORDER BY change LIMIT \(limit + 1)
                """)
            return ZoneChangeFeed.page(rows, zone: row, start: start, limit: limit)
        }
    }

    func currentToken(_ zone: ZoneID, caller: String) async throws -> ChangeToken {
        try await delivery.client.withConnection { connection in
            try await self.authorized(connection, zone, caller: caller, .read).token
        }
    }

    func record(_ zone: ZoneID, reader: ZoneReader, name: String, now: Date) async throws -> ZoneRecord {
        try await delivery.client.withConnection { connection in
            switch reader {
            case .did(let did):
                let row = try await self.authorized(connection, zone, caller: did, .read)
                guard let record = try await self.record(connection, zoneId: row.zoneId, name: name), !record.deleted else {
                    throw DeliveryError.recordNotFound(name)
                }
                return record.record(incarnation: row.incarnation)
            case .snapshotCapability:
                guard zone.kind == .snapshot, let row = try await self.zone(connection, zone.raw, lock: false) else {
                    throw DeliveryError.zoneNotFound(zone.raw)
                }
                return try ZoneRules.checkSnapshotCapability(try await self.record(connection, zoneId: row.zoneId, name: name), now: now)
                    .record(incarnation: row.incarnation)
            }
        }
    }

    func usage(owner: String) async throws -> [ZoneUsage] {
        var zones: [ZoneUsage] = []
        for try await (zoneId, records, bytes) in try await delivery.client.query(
            "SELECT zone_id, records, bytes FROM zones WHERE owner = \(owner) ORDER BY zone_id", logger: logger
        ).decode((String, Int, Int).self) {
            zones.append(ZoneUsage(zoneId: zoneId, records: records, bytes: bytes))
        }
        return zones
    }
}
