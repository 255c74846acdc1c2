import Foundation
import GRDB
import ImprintServer

extension SQLiteZoneServiceStore {
    func compact(_ zone: ZoneID, caller: String?, now: Date) async throws -> CompactZoneOutput {
        try ZoneCompaction.check(zone)
        let (output, hashes) = try await write { db -> (CompactZoneOutput, [String]) in
            let row = try caller.map { try Self.authorized(db, zone, caller: $0, .read) } ?? Self.existingZone(db, zone)
            let convoId = row.convoId ?? ""
            let done = try SQLiteDeliveryStore.compactedBefore(db, convoId: convoId)
            guard let point = try SQLiteDeliveryStore.compactionPoint(db, convoId: convoId), point > done else {
                return (CompactZoneOutput(compactedBefore: done > 0 ? done : nil, deletedRecords: 0, freedBytes: 0, forgottenMessages: 0), [])
            }
            let types = ZoneCompaction.compactedTypes
            let doomed = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT asset_hash, COALESCE(asset_size, 0) FROM zone_records
                WHERE zone_id = ? AND deleted = 0 AND seq < ? AND record_type IN (?, ?)
                """), arguments: [row.zoneId, point, types[0], types[1]])
            let bytes = doomed.reduce(0) { $0 + ($1[1] as Int) }
            try db.execute(sql: """
                DELETE FROM zone_records WHERE zone_id = ? AND deleted = 0 AND seq < ? AND record_type IN (?, ?)
                """, arguments: [row.zoneId, point, types[0], types[1]])
            let change = row.lastChange + 1
            try db.execute(sql: """
                UPDATE zones SET last_change = ?, purged_through = ?, records = records - ?, bytes = bytes - ? WHERE zone_id = ?
                """, arguments: [change, change, doomed.count, bytes, row.zoneId])
            let forgotten = try SQLiteDeliveryStore.forgetMessages(db, convoId: convoId, before: point)
            return (CompactZoneOutput(compactedBefore: point, deletedRecords: doomed.count, freedBytes: bytes, forgottenMessages: forgotten),
                    doomed.compactMap { $0[0] as String? })
        }
        guard output.deletedRecords > 0 || output.forgottenMessages > 0 else { return output }
        changed(zone.raw)
        try await collect(hashes)
        try await delivery.reclaimFreePages()
        return output
    }

    func zonesToCompact(limit: Int) async throws -> [ZoneID] {
        try await delivery.pool.read { db in
            try String.fetchAll(db.cachedStatement(sql: """
                SELECT z.zone_id FROM zones z JOIN convos c ON c.id = z.convo_id
                WHERE z.kind = 'shared' AND EXISTS (
                    SELECT 1 FROM messages m WHERE m.convo_id = c.id AND m.checkpoint = 1 AND m.seq > c.compacted_before
                    AND m.seq <= (SELECT MIN(processed_seq) FROM members WHERE convo_id = c.id AND active = 1))
                ORDER BY z.zone_id LIMIT ?
                """), arguments: [limit]).compactMap { try? ZoneID($0) }
        }
    }
}
