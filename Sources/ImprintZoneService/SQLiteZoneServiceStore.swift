import Foundation
import GRDB
import Hummingbird
import ImprintServer
import NIOCore
import NIOPosix

/// The zone service on the embedded SQLite database of the Delivery Service, blobs as files.
///
/// Every write runs in the Delivery Service's group commit (one writer, serial pieces), so a
/// zone's change numbers are allocated and committed in order; reads are snapshots of the WAL.
/// Access is checked in the same transaction as the work, against the same `members` table the
/// Delivery Service writes: a member removed by a committed `removeMember` is refused at once.
final class SQLiteZoneServiceStore: ZoneServiceStore {
    let delivery: SQLiteDeliveryStore
    let blobs: FileAssetBlobs
    var bell: EventBell { delivery.eventBell }
    var stagingDirectory: URL { blobs.stagingDirectory }
    /// Uploads become blob files by a link of the staged file.
    var keepsStagedFiles: Bool { true }

    init(delivery: SQLiteDeliveryStore, dataDirectory: URL) {
        self.delivery = delivery
        blobs = FileAssetBlobs(dataDirectory: dataDirectory)
    }

    func migrate() async throws {
        try await delivery.applyMigrations(ZoneSQLiteSchema.migrations)
    }

    func shutdown() async throws {}

    func write<Value: Sendable>(_ work: @escaping @Sendable (Database) throws -> Value) async throws -> Value {
        try await delivery.groupCommit.write(work)
    }

    func changed(_ zoneId: String) {
        bell.ring(recipients: CollectionOfOne(ZoneEvents.key(zoneId)))
    }

    // MARK: Facts

    static let zoneColumns = "zone_id, kind, owner, convo_id, incarnation, last_change, purged_through, created_at"

    static func zoneRow(_ row: Row) -> ZoneRow {
        ZoneRow(
            zoneId: row[0], kind: ZoneID.Kind(rawValue: row[1]) ?? .shared, owner: row[2], convoId: row[3], incarnation: row[4],
            lastChange: row[5], purgedThrough: row[6], createdAt: StoreTime.date(row[7]))
    }

    static func zone(_ db: Database, _ zoneId: String) throws -> ZoneRow? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(zoneColumns) FROM zones WHERE zone_id = ?"), arguments: [zoneId]).map(zoneRow)
    }

    static func existingZone(_ db: Database, _ zone: ZoneID) throws -> ZoneRow {
        guard let row = try Self.zone(db, zone.raw) else { throw DeliveryError.zoneNotFound(zone.raw) }
        return row
    }

    static func answer(_ db: Database, _ question: ZoneRules.RosterQuestion?) throws -> Bool {
        switch question {
        case nil: return false
        case .activeMember(let convoId, let did):
            return try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM members WHERE convo_id = ? AND did = ? AND active = 1"),
                                     arguments: [convoId, did]) != nil
        case .inboxWriter(let did, let owner, let zoneId, let capabilityHash):
            if let capabilityHash, try Bool.fetchOne(db.cachedStatement(sql: """
                SELECT 1 FROM inbox_capabilities WHERE zone_id = ? AND key_hash = ?
                """), arguments: [zoneId, capabilityHash]) != nil {
                return true
            }
            return try Bool.fetchOne(db.cachedStatement(sql: """
                SELECT 1 FROM members a JOIN members b ON a.convo_id = b.convo_id
                WHERE a.did = ? AND a.active = 1 AND b.did = ? AND b.active = 1 LIMIT 1
                """), arguments: [did, owner]) != nil
        }
    }

    /// The zone, once `caller` passed `access`.
    static func authorized(_ db: Database, _ zone: ZoneID, caller: String, _ access: ZoneRules.Access,
                           inboxCapability: String? = nil) throws -> ZoneRow {
        let row = try existingZone(db, zone)
        let answer = try answer(db, ZoneRules.rosterQuestion(access, zone: row, caller: caller, inboxCapability: inboxCapability))
        try ZoneRules.check(access, zone: row, caller: caller, rosterAnswer: answer)
        return row
    }

    static let recordColumns = """
        record_name, record_type, fields, asset_hash, asset_size, saved_by, change, saved_at, deleted, expires_at, comment_key_hash
        """

    static func recordRow(_ row: Row) -> RecordRow {
        RecordRow(
            name: row[0], type: row[1], fieldsJSON: row[2], assetHash: row[3], assetSize: row[4], savedBy: row[5], change: row[6],
            savedAt: StoreTime.date(row[7]), deleted: row[8], expiresAt: (row[9] as Int64?).map(StoreTime.date),
            commentKeyHash: row[10])
    }

    static func record(_ db: Database, zoneId: String, name: String) throws -> RecordRow? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(recordColumns) FROM zone_records WHERE zone_id = ? AND record_name = ?"),
                         arguments: [zoneId, name]).map(recordRow)
    }

    static func ownerBytes(_ db: Database, owner: String) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(SUM(bytes), 0) FROM zones WHERE owner = ?"), arguments: [owner]) ?? 0
    }

    // MARK: Zones

    func createZone(_ zone: ZoneID, convoId: String?, caller: String, now: Date) async throws -> ZoneView {
        if let convoId, zone.kind != .shared || convoId != zone.subject {
            throw DeliveryError.invalidRequest("convoId must be the convo of a doc_<convoId> zone")
        }
        return try await write { db in
            var member: Bool?
            if zone.kind == .shared {
                if try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM convos WHERE id = ?"), arguments: [zone.subject]) != nil {
                    member = try Self.answer(db, .activeMember(convoId: zone.subject, did: caller))
                }
            }
            try ZoneRules.checkCreate(zone, caller: caller, convoMember: member)
            guard try Self.zone(db, zone.raw) == nil else { throw DeliveryError.zoneExists(zone.raw) }
            let row = ZoneRow(
                zoneId: zone.raw, kind: zone.kind, owner: caller, convoId: zone.kind == .shared ? zone.subject : nil,
                incarnation: ZoneRules.newIncarnation(), lastChange: 0, purgedThrough: 0, createdAt: now)
            try db.execute(sql: """
                INSERT INTO zones (zone_id, kind, owner, convo_id, incarnation, last_change, purged_through, records, bytes, created_at)
                VALUES (?, ?, ?, ?, ?, 0, 0, 0, 0, ?)
                """, arguments: [row.zoneId, row.kind.rawValue, row.owner, row.convoId, row.incarnation, StoreTime.millis(now)])
            return row.view
        }
    }

    func deleteZone(_ zone: ZoneID, caller: String) async throws {
        let hashes = try await write { db -> [String] in
            let row = try Self.existingZone(db, zone)
            var creatorOfEmptyConvo = false
            if let convoId = row.convoId {
                let creator = try String.fetchOne(db.cachedStatement(sql: "SELECT creator FROM convos WHERE id = ?"), arguments: [convoId])
                let active = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM members WHERE convo_id = ? AND active = 1"),
                                              arguments: [convoId]) ?? 0
                creatorOfEmptyConvo = creator == caller && active == 0
            }
            try ZoneRules.checkDeleteZone(row, caller: caller, creatorOfEmptyConvo: creatorOfEmptyConvo)
            let hashes = try String.fetchAll(db.cachedStatement(sql: """
                SELECT asset_hash FROM zone_records WHERE zone_id = ? AND asset_hash IS NOT NULL
                UNION SELECT hash FROM zone_uploads WHERE zone_id = ?
                """), arguments: [zone.raw, zone.raw])
            try db.execute(sql: "DELETE FROM zone_records WHERE zone_id = ?", arguments: [zone.raw])
            try db.execute(sql: "DELETE FROM zone_uploads WHERE zone_id = ?", arguments: [zone.raw])
            try db.execute(sql: "DELETE FROM inbox_capabilities WHERE zone_id = ?", arguments: [zone.raw])
            try db.execute(sql: "DELETE FROM zones WHERE zone_id = ?", arguments: [zone.raw])
            return hashes
        }
        changed(zone.raw)
        try await collect(hashes)
    }

    /// Removes the blobs of `hashes` that no record and no pending upload references any more.
    /// Runs after the transaction that dropped the references committed, in a write of its own
    /// (serialized with uploads, which place blobs inside their write).
    func collect(_ hashes: [String]) async throws {
        guard !hashes.isEmpty else { return }
        try await delivery.pool.write { [blobs] db in
            for hash in Set(hashes) {
                let referenced = try Bool.fetchOne(db.cachedStatement(sql: """
                    SELECT 1 WHERE EXISTS (SELECT 1 FROM zone_records WHERE asset_hash = ?)
                               OR EXISTS (SELECT 1 FROM zone_uploads WHERE hash = ?)
                    """), arguments: [hash, hash]) != nil
                if !referenced {
                    try db.execute(sql: "DELETE FROM zone_inline_blobs WHERE hash = ?", arguments: [hash])
                    blobs.remove(hash)
                }
            }
        }
    }

    // MARK: Assets

    func putInboxCapability(_ zone: ZoneID, caller: String, name: String, keyHash: String?, limit: Int, now: Date) async throws {
        try await write { db in
            let row = try Self.existingZone(db, zone)
            try ZoneRules.checkPutInboxCapability(row, caller: caller)
            guard let keyHash else {
                try db.execute(sql: "DELETE FROM inbox_capabilities WHERE zone_id = ? AND name = ?", arguments: [zone.raw, name])
                return
            }
            let others = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM inbox_capabilities WHERE zone_id = ? AND name <> ?"),
                                          arguments: [zone.raw, name]) ?? 0
            guard others < limit else { throw DeliveryError.forbidden("inbox \(zone.raw) holds \(limit) write capabilities already") }
            try db.execute(sql: """
                INSERT INTO inbox_capabilities (zone_id, name, key_hash, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (zone_id, name) DO UPDATE SET key_hash = excluded.key_hash, updated_at = excluded.updated_at
                """, arguments: [zone.raw, name, keyHash, StoreTime.millis(now)])
        }
    }

    func admitUpload(_ zone: ZoneID, caller: String, inboxCapability: String?, size: Int, quota: Int) async throws {
        try await delivery.pool.read { db in
            let row = try Self.authorized(db, zone, caller: caller, .write, inboxCapability: inboxCapability)
            guard try Self.ownerBytes(db, owner: row.owner) + size <= quota else { throw DeliveryError.quotaExceeded(quota: quota) }
        }
    }

    /// The blob is linked into place (durably, on the blocking pool) before the write
    /// transaction, so that the directory fsync overlaps other requests instead of holding
    /// SQLite's one writer; the transaction checks it is still there (garbage collection runs
    /// in the writer too) and places the staged file again if not. A failed or refused upload
    /// leaves the blob to `collect`, which removes it unless something references it.
    func commitUpload(_ zone: ZoneID, caller: String, inboxCapability: String?, staged: StagedAsset, quota: Int, now: Date) async throws {
        defer { staged.discard() }
        do {
            try await NIOThreadPool.singleton.runIfActive { [blobs] in try blobs.placeLink(staged) }
            try await write { [blobs] db in
                let row = try Self.authorized(db, zone, caller: caller, .write, inboxCapability: inboxCapability)
                guard try Self.ownerBytes(db, owner: row.owner) + staged.size <= quota else { throw DeliveryError.quotaExceeded(quota: quota) }
                if !blobs.exists(staged.hash) { try blobs.place(staged) }
                try db.cachedStatement(sql: """
                    INSERT INTO zone_uploads (zone_id, hash, size, uploaded_by, uploaded_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (zone_id, hash) DO NOTHING
                    """).execute(arguments: [zone.raw, staged.hash, staged.size, caller, StoreTime.millis(now)])
            }
        } catch {
            try? await collect([staged.hash])
            throw error
        }
    }

    func readableAsset(_ zone: ZoneID, reader: ZoneReader, hash: String, now: Date) async throws -> ZoneAssetRef {
        try await delivery.pool.read { db in
            switch reader {
            case .did(let did):
                _ = try Self.authorized(db, zone, caller: did, .read)
                guard let size = try Int.fetchOne(db.cachedStatement(sql: """
                    SELECT asset_size FROM zone_records WHERE zone_id = ? AND asset_hash = ? AND deleted = 0 LIMIT 1
                    """), arguments: [zone.raw, hash])
                else { throw DeliveryError.assetNotFound(hash) }
                return ZoneAssetRef(hash: hash, size: size)
            case .snapshotCapability(let name):
                guard zone.kind == .snapshot, try Self.zone(db, zone.raw) != nil else { throw DeliveryError.zoneNotFound(zone.raw) }
                let record = try ZoneRules.checkSnapshotCapability(try Self.record(db, zoneId: zone.raw, name: name), now: now)
                guard record.assetHash == hash, let size = record.assetSize else { throw DeliveryError.assetNotFound(hash) }
                return ZoneAssetRef(hash: hash, size: size)
            }
        }
    }

    func writeAsset<Writer: ResponseBodyWriter>(hash: String, range: Range<Int>, to writer: inout Writer) async throws {
        let inline = try await delivery.pool.read { db in
            try Data.fetchOne(db.cachedStatement(sql: "SELECT bytes FROM zone_inline_blobs WHERE hash = ?"), arguments: [hash])
        }
        guard let inline else { return try await blobs.write(hash: hash, range: range, to: &writer) }
        guard range.lowerBound >= 0, range.upperBound <= inline.count else {
            throw AssetFileError(operation: "read (short)", path: "zone_inline_blobs/\(hash)", code: EIO)
        }
        try await writer.write(ByteBuffer(bytes: inline[inline.startIndex + range.lowerBound ..< inline.startIndex + range.upperBound]))
    }

    // MARK: Records

    func saveRecords(_ batch: RecordBatch) async throws -> [ZoneRecord] {
        let result: (records: [ZoneRecord], wrote: Bool)
        do {
            result = try await write { db in
                let zone: ZoneRow
                switch batch.writer {
                case .did(let did):
                    zone = try Self.authorized(db, batch.zone, caller: did, .write, inboxCapability: batch.inboxCapability)
                case .commentCapability(let snapshotName, let capabilityHash):
                    zone = try Self.existingZone(db, batch.zone)
                    let snapshot = try ZoneRules.checkSnapshotCapability(try Self.record(db, zoneId: zone.zoneId, name: snapshotName), now: batch.now)
                    guard snapshot.commentKeyHash == capabilityHash else { throw DeliveryError.forbidden("wrong comment capability") }
                }
                var decisions: [ZoneRules.SaveDecision] = []
                var writes: [RecordSave] = []
                for save in batch.records {
                    let decision = try ZoneRules.decide(save, existing: try Self.record(db, zoneId: zone.zoneId, name: save.name))
                    decisions.append(decision)
                    guard case .write = decision else { continue }
                    if let asset = save.asset {
                        let uploaded = try Int.fetchOne(db.cachedStatement(sql: """
                            SELECT size FROM zone_uploads WHERE zone_id = ? AND hash = ?
                            UNION ALL SELECT asset_size FROM zone_records WHERE zone_id = ? AND asset_hash = ? AND deleted = 0
                            LIMIT 1
                            """), arguments: [zone.zoneId, asset.hash, zone.zoneId, asset.hash])
                        guard uploaded == asset.size else {
                            throw DeliveryError.invalidRequest("asset \(asset.hash) of \(save.name) was not uploaded to this zone with that size")
                        }
                    }
                    if ZoneRules.needsMessageCheck(save, zone: zone) {
                        let key = try ZoneRules.messageKey(save, zone: zone)
                        let message = try Row.fetchOne(db.cachedStatement(sql: "SELECT sender, hash FROM messages WHERE convo_id = ? AND seq = ?"),
                                                       arguments: [key.convoId, key.seq]).map { (sender: $0[0] as String, hash: $0[1] as String) }
                        try ZoneRules.checkMessage(save, caller: batch.writer.did ?? "", payloadHash: key.payloadHash, message: message)
                    }
                    writes.append(save)
                }
                let added = ZoneRules.added(writes)
                if added.bytes > 0, try Self.ownerBytes(db, owner: zone.owner) + added.bytes > batch.quota {
                    throw DeliveryError.quotaExceeded(quota: batch.quota)
                }
                var change = zone.lastChange
                var saved: [String: ZoneRecord] = [:]
                // Inline assets go into the database with the records that name them: one
                // commit holds both, so a record never outlives its bytes or the reverse.
                for inline in writes.compactMap(\.inline) {
                    let bytes = try inline.inlineBytes ?? Data(contentsOf: URL(fileURLWithPath: inline.path))
                    try db.cachedStatement(sql: "INSERT INTO zone_inline_blobs (hash, bytes) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING")
                        .execute(arguments: [inline.hash, bytes])
                }
                for save in writes {
                    change += 1
                    let asset = save.asset ?? save.inline.map { ZoneAssetRef(hash: $0.hash, size: $0.size) }
                    try db.cachedStatement(sql: """
                        INSERT OR REPLACE INTO zone_records (zone_id, record_name, record_type, fields, asset_hash, asset_size, saved_by,
                            change, saved_at, deleted, epoch, seq, expires_at, comment_key_hash)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)
                        """).execute(arguments: [
                            zone.zoneId, save.name, save.type, save.fieldsJSON, asset?.hash, asset?.size, batch.writer.did, change,
                            StoreTime.millis(batch.now), save.routing.epoch, save.routing.seq,
                            save.routing.expiresAt.map(StoreTime.millis), save.routing.commentKeyHash,
                        ])
                    if let asset {
                        try db.cachedStatement(sql: "DELETE FROM zone_uploads WHERE zone_id = ? AND hash = ?").execute(arguments: [zone.zoneId, asset.hash])
                    }
                    saved[save.name] = ZoneRecord(
                        recordName: save.name, recordType: save.type, fields: save.fields, asset: asset,
                        changeToken: ChangeToken(incarnation: zone.incarnation, change: change).text, savedAt: batch.now, deleted: false)
                }
                if !writes.isEmpty {
                    try db.cachedStatement(sql: "UPDATE zones SET last_change = ?, records = records + ?, bytes = bytes + ? WHERE zone_id = ?")
                        .execute(arguments: [change, added.records, added.bytes, zone.zoneId])
                }
                let records = zip(batch.records, decisions).map { save, decision -> ZoneRecord in
                    if case .unchanged(let row) = decision { return row.record(incarnation: zone.incarnation) }
                    return saved[save.name]!
                }
                return (records, !writes.isEmpty)
            }
        } catch {
            for save in batch.records { save.inline?.discard() }
            throw error
        }
        for save in batch.records { save.inline?.discard() }  // placed ones were renamed away already
        if result.wrote { changed(batch.zone.raw) }
        return result.records
    }

    func deleteRecords(_ zone: ZoneID, caller: String, names: [String], now: Date, tombstoneRetention: Int64) async throws -> [String] {
        let (deleted, hashes) = try await write { db -> ([String], [String]) in
            let row = try Self.authorized(db, zone, caller: caller, .deleteRecords)
            var deleted: [String] = []
            var hashes: [String] = []
            var change = row.lastChange
            var bytes = 0
            for name in names {
                guard let record = try Self.record(db, zoneId: row.zoneId, name: name), !record.deleted else { continue }
                if row.kind == .shared, record.savedBy != caller {
                    throw DeliveryError.forbidden("a member deletes only records it saved; \(name) is another's")
                }
                change += 1
                bytes += record.assetSize ?? 0
                if let hash = record.assetHash { hashes.append(hash) }
                try db.execute(sql: """
                    UPDATE zone_records SET deleted = 1, fields = '{}', asset_hash = NULL, asset_size = NULL, change = ?, saved_at = ?,
                        epoch = NULL, seq = NULL, expires_at = NULL, comment_key_hash = NULL
                    WHERE zone_id = ? AND record_name = ?
                    """, arguments: [change, StoreTime.millis(now), row.zoneId, name])
                deleted.append(name)
            }
            let horizon = StoreTime.millis(now) - tombstoneRetention * 1000
            let purged = try Int64.fetchOne(db.cachedStatement(sql: """
                SELECT MAX(change) FROM zone_records WHERE zone_id = ? AND deleted = 1 AND saved_at < ?
                """), arguments: [row.zoneId, horizon])
            if let purged {
                try db.execute(sql: "DELETE FROM zone_records WHERE zone_id = ? AND deleted = 1 AND change <= ?", arguments: [row.zoneId, purged])
            }
            try db.execute(sql: """
                UPDATE zones SET last_change = ?, records = records - ?, bytes = bytes - ?, purged_through = MAX(purged_through, ?)
                WHERE zone_id = ?
                """, arguments: [change, deleted.count, bytes, purged ?? 0, row.zoneId])
            return (deleted, hashes)
        }
        if !deleted.isEmpty { changed(zone.raw) }
        try await collect(hashes)
        return deleted
    }

    func changes(_ zone: ZoneID, caller: String, since: String?, limit: Int) async throws -> FetchChangesOutput {
        try await delivery.pool.read { db in
            let row = try Self.authorized(db, zone, caller: caller, .read)
            let start = try ZoneChangeFeed.start(since, zone: row)
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT \(Self.recordColumns) FROM zone_records WHERE zone_id = ? AND change > ? ORDER BY change LIMIT ?
                """), arguments: [row.zoneId, start, limit + 1]).map(Self.recordRow)
            return ZoneChangeFeed.page(rows, zone: row, start: start, limit: limit)
        }
    }

    func currentToken(_ zone: ZoneID, caller: String) async throws -> ChangeToken {
        try await delivery.pool.read { db in try Self.authorized(db, zone, caller: caller, .read).token }
    }

    func record(_ zone: ZoneID, reader: ZoneReader, name: String, now: Date) async throws -> ZoneRecord {
        try await delivery.pool.read { db in
            switch reader {
            case .did(let did):
                let row = try Self.authorized(db, zone, caller: did, .read)
                guard let record = try Self.record(db, zoneId: row.zoneId, name: name), !record.deleted else {
                    throw DeliveryError.recordNotFound(name)
                }
                return record.record(incarnation: row.incarnation)
            case .snapshotCapability:
                guard zone.kind == .snapshot, let row = try Self.zone(db, zone.raw) else { throw DeliveryError.zoneNotFound(zone.raw) }
                return try ZoneRules.checkSnapshotCapability(try Self.record(db, zoneId: row.zoneId, name: name), now: now)
                    .record(incarnation: row.incarnation)
            }
        }
    }

    func usage(owner: String) async throws -> [ZoneUsage] {
        try await delivery.pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: "SELECT zone_id, records, bytes FROM zones WHERE owner = ? ORDER BY zone_id"),
                             arguments: [owner]).map { ZoneUsage(zoneId: $0[0], records: $0[1], bytes: $0[2]) }
        }
    }
}
