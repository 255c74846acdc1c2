import Foundation
import ImprintDelivery
import PostgresNIO

/// v1.3 processed cursors and checkpoints on PostgreSQL (see `CompactionPoint` for the rule).
/// Writes take the convo's row lock (`lockMemberConvo`), as every other write of a convo does.
extension PostgresDeliveryStore {
    public func updateCursor(convoId: String, did: String, processedSeq: Int, now: Date) async throws -> Int {
        try await transaction { connection in
            let current = try await self.lockMemberConvo(connection, convoId: convoId, caller: did)
            try CompactionPoint.checkCursor(processedSeq, lastSeq: current.lastSeq)
            try await connection.query(
                """
                UPDATE members SET processed_seq = \(processedSeq), cursor_at = \(StoreTime.millis(now))
                WHERE convo_id = \(convoId) AND did = \(did) AND processed_seq < \(processedSeq)
                """, logger: self.logger)
            return try await Self.single(Int.self, connection.query(
                "SELECT processed_seq FROM members WHERE convo_id = \(convoId) AND did = \(did)", logger: self.logger)) ?? processedSeq
        }
    }

    public func markCheckpoint(convoId: String, did: String, seq: Int) async throws {
        try await transaction { connection in
            _ = try await self.lockMemberConvo(connection, convoId: convoId, caller: did)
            let row = try await Self.single((String, String).self, connection.query(
                "SELECT sender, message_type FROM messages WHERE convo_id = \(convoId) AND seq = \(seq)", logger: self.logger))
            try CompactionPoint.checkCheckpoint(seq: seq, sender: row?.0, messageType: row?.1, caller: did)
            try await connection.query(
                "UPDATE messages SET checkpoint = TRUE WHERE convo_id = \(convoId) AND seq = \(seq)", logger: self.logger)
        }
    }

    public func cursors(convoId: String, caller: String) async throws -> GetCursorsOutput {
        try await client.withConnection { connection in
            _ = try await self.lockMemberConvo(connection, convoId: convoId, caller: caller, forUpdate: false)
            var cursors: [MemberCursorView] = []
            for try await (did, seq, at, joined) in try await connection.query(
                "SELECT did, processed_seq, cursor_at, joined_at FROM members WHERE convo_id = \(convoId) AND active ORDER BY did", logger: self.logger
            ).decode((String, Int, Int64?, Int64).self) {
                cursors.append(MemberCursorView(did: did, processedSeq: seq, updatedAt: at.map(StoreTime.date), joinedAt: StoreTime.date(joined)))
            }
            return GetCursorsOutput(
                cursors: cursors, compactableBefore: try await self.compactionPoint(connection, convoId: convoId),
                firstKeptSeq: max(1, try await self.compactedBefore(connection, convoId: convoId)))
        }
    }

    /// The newest checkpoint at or below every active member's cursor (`CompactionPoint`).
    package func compactionPoint(_ connection: PostgresConnection, convoId: String) async throws -> Int? {
        try await Self.single(Int?.self, connection.query(
            """
            SELECT MAX(seq) FROM messages WHERE convo_id = \(convoId) AND checkpoint
            AND seq <= (SELECT MIN(processed_seq) FROM members WHERE convo_id = \(convoId) AND active)
            """, logger: logger)) ?? nil
    }

    /// The seq below which the convo's messages were forgotten (0: none).
    package func compactedBefore(_ connection: PostgresConnection, convoId: String) async throws -> Int {
        try await Self.single(Int.self, connection.query(
            "SELECT compacted_before FROM convos WHERE id = \(convoId)", logger: logger)) ?? 0
    }

    /// Forgets the convo's messages below `seq` and records where the kept ones begin; returns
    /// how many were forgotten. Run inside the transaction that deletes their records.
    package func forgetMessages(_ connection: PostgresConnection, convoId: String, before seq: Int) async throws -> Int {
        // Their `message` events too (SQLiteDeliveryStore.forgetMessages says why).
        try await connection.query("""
            WITH doomed AS (
                DELETE FROM event_payloads p USING messages m
                WHERE m.convo_id = \(convoId) AND m.seq = \(seq) AND p.convo_id = \(convoId) AND p.created_at <= m.sent_at
                AND p.kind = 'message' AND (p.payload::json->>'seq')::BIGINT < \(seq)
                RETURNING p.id)
            DELETE FROM events WHERE payload_id IN (SELECT id FROM doomed)
            """, logger: logger)
        let forgotten = try await Self.single(Int.self, connection.query(
            "WITH gone AS (DELETE FROM messages WHERE convo_id = \(convoId) AND seq < \(seq) RETURNING 1) SELECT COUNT(*)::BIGINT FROM gone",
            logger: logger)) ?? 0
        try await connection.query(
            "UPDATE convos SET compacted_before = GREATEST(compacted_before, \(seq)) WHERE id = \(convoId)", logger: logger)
        return forgotten
    }
}
