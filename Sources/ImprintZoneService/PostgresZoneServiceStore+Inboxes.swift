import Foundation
import ImprintServer
import PostgresNIO

/// `saveToInboxes` on PostgreSQL: one transaction and a fixed number of statements whatever
/// the number of inboxes, the inboxes passed as arrays (`= ANY($1::TEXT[])`, `unnest`).
///
/// Locks, in the store's order (so no deadlock with `saveRecords`, uploads or another
/// fan-out): every inbox's zone row (`FOR UPDATE`, in zone id order), held to COMMIT, so each
/// zone's change numbers are drawn and committed in order as in `saveRecords`; then each
/// distinct inline payload's blob lock (placing it); then the owners' quota locks, in key
/// order, before their bytes are read.
extension PostgresZoneServiceStore {
    func saveToInboxes(_ fanOut: InboxFanOut) async throws -> [Result<[ZoneRecord], DeliveryError>] {
        defer { fanOut.discardStaged() }
        let plan = try await transaction { connection -> InboxPlan in
            var facts = InboxFacts()
            for try await (zoneId, kind, owner, convoId, incarnation, lastChange, purgedThrough, createdAt) in try await connection.query("""
                SELECT zone_id, kind, owner, convo_id, incarnation, last_change, purged_through, created_at FROM zones
                WHERE zone_id = ANY(\(fanOut.zoneIds)::TEXT[]) ORDER BY zone_id FOR UPDATE
                """, logger: self.logger).decode((String, String, String, String?, String, Int64, Int64, Int64).self) {
                facts.zones[zoneId] = ZoneRow(
                    zoneId: zoneId, kind: ZoneID.Kind(rawValue: kind) ?? .shared, owner: owner, convoId: convoId, incarnation: incarnation,
                    lastChange: lastChange, purgedThrough: purgedThrough, createdAt: StoreTime.date(createdAt))
            }
            let owners = Set(facts.zones.values.map(\.owner)).sorted()
            let others = owners.filter { $0 != fanOut.writer }
            if !others.isEmpty {
                for try await did in try await connection.query("""
                    SELECT DISTINCT b.did FROM members a JOIN members b ON a.convo_id = b.convo_id
                    WHERE a.did = \(fanOut.writer) AND a.active AND b.active AND b.did = ANY(\(others)::TEXT[])
                    """, logger: self.logger).decode(String.self) {
                    facts.coMembers.insert(did)
                }
            }
            let presented = fanOut.capabilities
            if !presented.zoneIds.isEmpty {
                for try await zoneId in try await connection.query("""
                    SELECT c.zone_id FROM inbox_capabilities c
                    JOIN unnest(\(presented.zoneIds)::TEXT[], \(presented.hashes)::TEXT[]) AS p (zone_id, key_hash)
                        ON c.zone_id = p.zone_id AND c.key_hash = p.key_hash
                    """, logger: self.logger).decode(String.self) {
                    facts.capable.insert(zoneId)
                }
            }
            for try await (zoneId, name, type, fields, hash, size, savedBy, change, savedAt, deleted, expiresAt, commentKeyHash) in
                try await connection.query("""
                    SELECT zone_id, \(unescaped: Self.recordColumns) FROM zone_records
                    WHERE zone_id = ANY(\(fanOut.zoneIds)::TEXT[]) AND record_name = ANY(\(fanOut.recordNames)::TEXT[])
                    """, logger: self.logger).decode((String, String, String, String, String?, Int?, String?, Int64, Int64, Bool, Int64?, String?).self) {
                facts.existing[zoneId, default: [:]][name] = Self.recordRow(
                    (name, type, fields, hash, size, savedBy, change, savedAt, deleted, expiresAt, commentKeyHash))
            }
            let hashes = fanOut.uploadedHashes
            if !hashes.isEmpty {
                // Pending uploads first, then the assets of live records (`saveRecords`' order).
                for try await (zoneId, hash, size, _) in try await connection.query("""
                    SELECT zone_id, hash, size, 0::BIGINT FROM zone_uploads
                    WHERE zone_id = ANY(\(fanOut.zoneIds)::TEXT[]) AND hash = ANY(\(hashes)::TEXT[])
                    UNION ALL SELECT zone_id, asset_hash, asset_size, 1::BIGINT FROM zone_records
                    WHERE zone_id = ANY(\(fanOut.zoneIds)::TEXT[]) AND asset_hash = ANY(\(hashes)::TEXT[]) AND NOT deleted
                    ORDER BY 4
                    """, logger: self.logger).decode((String, String, Int, Int64).self) where facts.uploaded[zoneId]?[hash] == nil {
                    facts.uploaded[zoneId, default: [:]][hash] = size
                }
                // v1.4: what the writer holds anywhere here, uploaded or referenced by its own records.
                for try await (hash, size) in try await connection.query("""
                    SELECT hash, size FROM zone_uploads WHERE hash = ANY(\(hashes)::TEXT[]) AND uploaded_by = \(fanOut.writer)
                    UNION SELECT asset_hash, asset_size FROM zone_records
                    WHERE asset_hash = ANY(\(hashes)::TEXT[]) AND saved_by = \(fanOut.writer) AND NOT deleted
                    """, logger: self.logger).decode((String, Int).self) {
                    facts.possessed[hash] = size
                }
            }
            for staged in fanOut.staged { try await self.place(connection, staged) }
            if !owners.isEmpty {
                for try await _ in try await connection.query("""
                    SELECT 1::BIGINT FROM (SELECT pg_advisory_xact_lock(\(ZonePostgresSchema.ownerLockSpace), s.k)
                        FROM (SELECT DISTINCT hashtext(o) AS k FROM unnest(\(owners)::TEXT[]) AS o ORDER BY 1) AS s) AS locked
                    """, logger: self.logger).decode(Int64.self) {}
                for try await (owner, bytes) in try await connection.query("""
                    SELECT owner, COALESCE(SUM(bytes), 0)::BIGINT FROM zones WHERE owner = ANY(\(owners)::TEXT[]) GROUP BY owner
                    """, logger: self.logger).decode((String, Int).self) {
                    facts.ownerBytes[owner] = bytes
                }
            }
            let plan = fanOut.plan(facts)
            try await self.writeFanOut(connection, plan, by: fanOut.writer, now: fanOut.now)
            return plan
        }
        // A payload placed for inboxes that all refused is referenced by nothing.
        let unused = Set(fanOut.staged.map(\.hash)).subtracting(plan.usedInline.map(\.hash))
        try? await collect(Array(unused))
        if !plan.writtenZones.isEmpty { delivery.eventsCommitted(recipients: plan.writtenZones.map(ZoneEvents.key)) }
        return plan.outcomes
    }

    /// The accepted records in one `INSERT … SELECT FROM unnest(…)`, the pending uploads they
    /// consume in one `DELETE`, the zones' counters in one `UPDATE`. Nullable columns travel
    /// as text, empty for NULL (no value of theirs is empty).
    func writeFanOut(_ connection: PostgresConnection, _ plan: InboxPlan, by writer: String, now: Date) async throws {
        guard !plan.writes.isEmpty else { return }
        let writes = plan.writes
        let text = { (value: Int64?) in value.map(String.init) ?? "" }
        try await connection.query("""
            INSERT INTO zone_records (zone_id, record_name, record_type, fields, asset_hash, asset_size, saved_by,
                change, saved_at, deleted, epoch, seq, expires_at, comment_key_hash)
            SELECT u.zone_id, u.name, u.type, u.fields, NULLIF(u.hash, ''), NULLIF(u.size, '')::BIGINT, \(writer),
                u.change, \(StoreTime.millis(now)), FALSE, NULLIF(u.epoch, '')::BIGINT, NULLIF(u.seq, '')::BIGINT,
                NULLIF(u.expires, '')::BIGINT, NULLIF(u.comment_key, '')
            FROM unnest(\(writes.map(\.zoneId))::TEXT[], \(writes.map(\.save.name))::TEXT[], \(writes.map(\.save.type))::TEXT[],
                \(writes.map(\.save.fieldsJSON))::TEXT[], \(writes.map { $0.asset?.hash ?? "" })::TEXT[],
                \(writes.map { text($0.asset.map { Int64($0.size) }) })::TEXT[], \(writes.map(\.change))::BIGINT[],
                \(writes.map { text($0.save.routing.epoch) })::TEXT[], \(writes.map { text($0.save.routing.seq) })::TEXT[],
                \(writes.map { text($0.save.routing.expiresAt.map(StoreTime.millis)) })::TEXT[],
                \(writes.map { $0.save.routing.commentKeyHash ?? "" })::TEXT[])
                AS u (zone_id, name, type, fields, hash, size, change, epoch, seq, expires, comment_key)
            ON CONFLICT (zone_id, record_name) DO UPDATE SET
                record_type = excluded.record_type, fields = excluded.fields, asset_hash = excluded.asset_hash,
                asset_size = excluded.asset_size, saved_by = excluded.saved_by, change = excluded.change,
                saved_at = excluded.saved_at, deleted = FALSE, epoch = excluded.epoch, seq = excluded.seq,
                expires_at = excluded.expires_at, comment_key_hash = excluded.comment_key_hash
            """, logger: logger)
        let consumed = writes.filter { $0.asset != nil }
        if !consumed.isEmpty {
            try await connection.query("""
                DELETE FROM zone_uploads USING unnest(\(consumed.map(\.zoneId))::TEXT[], \(consumed.map { $0.asset?.hash ?? "" })::TEXT[]) AS u (zone_id, hash)
                WHERE zone_uploads.zone_id = u.zone_id AND zone_uploads.hash = u.hash
                """, logger: logger)
        }
        let zones = plan.zoneUpdates
        try await connection.query("""
            UPDATE zones SET last_change = u.change, records = zones.records + u.records, bytes = zones.bytes + u.bytes
            FROM unnest(\(zones.map(\.zoneId))::TEXT[], \(zones.map(\.lastChange))::BIGINT[], \(zones.map { Int64($0.records) })::BIGINT[],
                \(zones.map { Int64($0.bytes) })::BIGINT[]) AS u (zone_id, change, records, bytes)
            WHERE zones.zone_id = u.zone_id
            """, logger: logger)
    }
}
