import Foundation
import GRDB
import ImprintServer

/// `saveToInboxes` on SQLite: one write of the group commit for the whole fan-out. The facts
/// of every inbox (zones, shared convos, capabilities, stored names, owners' bytes) are read
/// with one query each, the inbox ids passed as one JSON array (`json_each`); the records are
/// written with one prepared statement reused per row. The single writer orders the zones'
/// change numbers as `saveRecords` does.
extension SQLiteZoneServiceStore {
    func saveToInboxes(_ fanOut: InboxFanOut) async throws -> [Result<[ZoneRecord], DeliveryError>] {
        defer { fanOut.discardStaged() }
        let plan = try await write { db in
            let plan = fanOut.plan(try Self.inboxFacts(db, fanOut))
            try Self.writeFanOut(db, plan, by: fanOut.writer, now: fanOut.now)
            return plan
        }
        bell.ring(recipients: plan.writtenZones.map(ZoneEvents.key))
        return plan.outcomes
    }

    static func jsonArray(_ values: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(values), as: UTF8.self)
    }

    static func inboxFacts(_ db: Database, _ fanOut: InboxFanOut) throws -> InboxFacts {
        var facts = InboxFacts()
        let zoneIds = try jsonArray(fanOut.zoneIds)
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT \(zoneColumns) FROM zones WHERE zone_id IN (SELECT value FROM json_each(?))
            """), arguments: [zoneIds]) {
            let zone = zoneRow(row)
            facts.zones[zone.zoneId] = zone
        }
        let owners = Set(facts.zones.values.map(\.owner)).subtracting([fanOut.writer]).sorted()
        if !owners.isEmpty {
            facts.coMembers = Set(try String.fetchAll(db.cachedStatement(sql: """
                SELECT DISTINCT b.did FROM members a JOIN members b ON a.convo_id = b.convo_id
                WHERE a.did = ? AND a.active = 1 AND b.active = 1 AND b.did IN (SELECT value FROM json_each(?))
                """), arguments: [fanOut.writer, try jsonArray(owners)]))
        }
        let presented = fanOut.capabilities
        if !presented.zoneIds.isEmpty {
            facts.capable = Set(try String.fetchAll(db.cachedStatement(sql: """
                SELECT c.zone_id FROM inbox_capabilities c
                JOIN (SELECT z.value AS zone_id, h.value AS key_hash FROM json_each(?) z JOIN json_each(?) h ON z.key = h.key) p
                    ON c.zone_id = p.zone_id AND c.key_hash = p.key_hash
                """), arguments: [try jsonArray(presented.zoneIds), try jsonArray(presented.hashes)]))
        }
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT \(recordColumns), zone_id FROM zone_records
            WHERE zone_id IN (SELECT value FROM json_each(?)) AND record_name IN (SELECT value FROM json_each(?))
            """), arguments: [zoneIds, try jsonArray(fanOut.recordNames)]) {
            let record = recordRow(row)
            facts.existing[row[11], default: [:]][record.name] = record
        }
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT owner, COALESCE(SUM(bytes), 0) FROM zones WHERE owner IN (SELECT value FROM json_each(?)) GROUP BY owner
            """), arguments: [try jsonArray(Set(facts.zones.values.map(\.owner)).sorted())]) {
            facts.ownerBytes[row[0]] = row[1]
        }
        let hashes = fanOut.uploadedHashes
        if !hashes.isEmpty {
            let hashList = try jsonArray(hashes)
            // Pending uploads first, then the assets of live records (`saveRecords`' order).
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                SELECT zone_id, hash, size, 0 FROM zone_uploads
                WHERE zone_id IN (SELECT value FROM json_each(?)) AND hash IN (SELECT value FROM json_each(?))
                UNION ALL SELECT zone_id, asset_hash, asset_size, 1 FROM zone_records
                WHERE zone_id IN (SELECT value FROM json_each(?)) AND asset_hash IN (SELECT value FROM json_each(?)) AND deleted = 0
                ORDER BY 4
                """), arguments: [zoneIds, hashList, zoneIds, hashList]) {
                let (zoneId, hash, size): (String, String, Int) = (row[0], row[1], row[2])
                if facts.uploaded[zoneId]?[hash] == nil { facts.uploaded[zoneId, default: [:]][hash] = size }
            }
            // v1.4: what the writer holds anywhere here, uploaded or referenced by its own records.
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                SELECT hash, size FROM zone_uploads WHERE hash IN (SELECT value FROM json_each(?)) AND uploaded_by = ?
                UNION SELECT asset_hash, asset_size FROM zone_records
                WHERE asset_hash IN (SELECT value FROM json_each(?)) AND saved_by = ? AND deleted = 0
                """), arguments: [hashList, fanOut.writer, hashList, fanOut.writer]) {
                let (hash, size): (String, Int) = (row[0], row[1])
                facts.possessed[hash] = size
            }
        }
        return facts
    }

    /// Writes what `plan` accepted: each inline payload once, every record row, each zone's
    /// counters. Inline bytes go into the database in the same commit as the records naming them.
    static func writeFanOut(_ db: Database, _ plan: InboxPlan, by writer: String, now: Date) throws {
        for inline in plan.usedInline {
            let bytes = try inline.inlineBytes ?? Data(contentsOf: URL(fileURLWithPath: inline.path))
            try db.cachedStatement(sql: "INSERT INTO zone_inline_blobs (hash, bytes) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING")
                .execute(arguments: [inline.hash, bytes])
        }
        let savedAt = StoreTime.millis(now)
        let insert = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO zone_records (zone_id, record_name, record_type, fields, asset_hash, asset_size, saved_by,
                change, saved_at, deleted, epoch, seq, expires_at, comment_key_hash)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)
            """)
        let clearUpload = try db.cachedStatement(sql: "DELETE FROM zone_uploads WHERE zone_id = ? AND hash = ?")
        for write in plan.writes {
            let save = write.save
            try insert.execute(arguments: [
                write.zoneId, save.name, save.type, save.fieldsJSON, write.asset?.hash, write.asset?.size, writer, write.change,
                savedAt, save.routing.epoch, save.routing.seq, save.routing.expiresAt.map(StoreTime.millis), save.routing.commentKeyHash,
            ])
            if let asset = write.asset { try clearUpload.execute(arguments: [write.zoneId, asset.hash]) }
        }
        let update = try db.cachedStatement(sql: "UPDATE zones SET last_change = ?, records = records + ?, bytes = bytes + ? WHERE zone_id = ?")
        for zone in plan.zoneUpdates {
            try update.execute(arguments: [zone.lastChange, zone.records, zone.bytes, zone.zoneId])
        }
    }
}
