import Foundation
import ImprintServer
import PostgresNIO

extension PostgresZoneServiceStore {
    /// As on SQLite; the convo's row is locked first (as the Delivery Service's writes of the
    /// convo do), so no cursor, checkpoint or member moves while the point is decided and used.
    /// Freed space is PostgreSQL's to reuse (autovacuum); blobs in the database go with their rows.
    func compact(_ zone: ZoneID, caller: String?, now: Date) async throws -> CompactZoneOutput {
        try ZoneCompaction.check(zone)
        let (output, hashes) = try await transaction { connection -> (CompactZoneOutput, [String]) in
            try await connection.query("SELECT 1 FROM convos WHERE id = \(zone.subject) FOR UPDATE", logger: self.logger)
            let row: ZoneRow
            if let caller {
                row = try await self.authorized(connection, zone, caller: caller, .read, lock: true)
            } else {
                guard let found = try await self.zone(connection, zone.raw, lock: true) else { throw DeliveryError.zoneNotFound(zone.raw) }
                row = found
            }
            let convoId = row.convoId ?? ""
            let done = try await self.delivery.compactedBefore(connection, convoId: convoId)
            guard let point = try await self.delivery.compactionPoint(connection, convoId: convoId), point > done else {
                return (CompactZoneOutput(compactedBefore: done > 0 ? done : nil, deletedRecords: 0, freedBytes: 0, forgottenMessages: 0), [])
            }
            var hashes: [String] = []
            var count = 0
            var bytes = 0
            for try await (hash, size) in try await connection.query(
                """
                DELETE FROM zone_records WHERE zone_id = \(row.zoneId) AND NOT deleted AND seq < \(point)
                AND record_type = ANY(\(ZoneCompaction.compactedTypes)::TEXT[])
                RETURNING asset_hash, COALESCE(asset_size, 0)::BIGINT
                """, logger: self.logger
            ).decode((String?, Int).self) {
                count += 1
                bytes += size
                if let hash { hashes.append(hash) }
            }
            let change = row.lastChange + 1
            try await connection.query("""
                UPDATE zones SET last_change = \(change), purged_through = \(change), records = records - \(count), bytes = bytes - \(bytes)
                WHERE zone_id = \(row.zoneId)
                """, logger: self.logger)
            let forgotten = try await self.delivery.forgetMessages(connection, convoId: convoId, before: point)
            return (CompactZoneOutput(compactedBefore: point, deletedRecords: count, freedBytes: bytes, forgottenMessages: forgotten), hashes)
        }
        guard output.deletedRecords > 0 || output.forgottenMessages > 0 else { return output }
        changed(zone.raw)
        try await collect(hashes)
        return output
    }

    func zonesToCompact(limit: Int) async throws -> [ZoneID] {
        try await delivery.client.withConnection { connection in
            var due: [ZoneID] = []
            for try await zoneId in try await connection.query(
                """
                SELECT z.zone_id FROM zones z JOIN convos c ON c.id = z.convo_id
                WHERE z.kind = 'shared' AND EXISTS (
                    SELECT 1 FROM messages m WHERE m.convo_id = c.id AND m.checkpoint AND m.seq > c.compacted_before
                    AND m.seq <= (SELECT MIN(processed_seq) FROM members WHERE convo_id = c.id AND active))
                ORDER BY z.zone_id LIMIT \(limit)
                """, logger: self.logger
            ).decode(String.self) {
                if let zone = try? ZoneID(zoneId) { due.append(zone) }
            }
            return due
        }
    }
}
