import Foundation
import GRDB
import ImprintDelivery

/// v1.3 processed cursors and checkpoints on SQLite (see `CompactionPoint` for the rule).
extension SQLiteDeliveryStore {
    public func updateCursor(convoId: String, did: String, processedSeq: Int, now: Date) async throws -> Int {
        try await groupCommit.write { db in
            let current = try Self.lockMemberConvo(db, convoId: convoId, caller: did)
            try CompactionPoint.checkCursor(processedSeq, lastSeq: current.lastSeq)
            try db.execute(
                cached: "UPDATE members SET processed_seq = ?, cursor_at = ? WHERE convo_id = ? AND did = ? AND processed_seq < ?",
                arguments: [processedSeq, StoreTime.millis(now), convoId, did, processedSeq])
            return try Int.fetchOne(
                try db.cachedStatement(sql: "SELECT processed_seq FROM members WHERE convo_id = ? AND did = ?"),
                arguments: [convoId, did]) ?? processedSeq
        }
    }

    public func markCheckpoint(convoId: String, did: String, seq: Int) async throws {
        try await groupCommit.write { db in
            _ = try Self.lockMemberConvo(db, convoId: convoId, caller: did)
            let row = try Row.fetchOne(
                try db.cachedStatement(sql: "SELECT sender, message_type FROM messages WHERE convo_id = ? AND seq = ?"),
                arguments: [convoId, seq])
            try CompactionPoint.checkCheckpoint(seq: seq, sender: row?["sender"], messageType: row?["message_type"], caller: did)
            try db.execute(cached: "UPDATE messages SET checkpoint = 1 WHERE convo_id = ? AND seq = ?", arguments: [convoId, seq])
        }
    }

    public func cursors(convoId: String, caller: String) async throws -> GetCursorsOutput {
        try await pool.read { db in
            _ = try Self.lockMemberConvo(db, convoId: convoId, caller: caller)
            let cursors = try Row.fetchAll(
                try db.cachedStatement(sql: "SELECT did, processed_seq, cursor_at, joined_at FROM members WHERE convo_id = ? AND active = 1 ORDER BY did"),
                arguments: [convoId]
            ).map { row in
                MemberCursorView(
                    did: row["did"], processedSeq: row["processed_seq"], updatedAt: (row["cursor_at"] as Int64?).map(StoreTime.date),
                    joinedAt: StoreTime.date(row["joined_at"]))
            }
            return GetCursorsOutput(
                cursors: cursors, compactableBefore: try Self.compactionPoint(db, convoId: convoId),
                firstKeptSeq: max(1, try Self.compactedBefore(db, convoId: convoId)))
        }
    }

    /// The newest checkpoint at or below every active member's cursor (`CompactionPoint`).
    package static func compactionPoint(_ db: Database, convoId: String) throws -> Int? {
        try Int.fetchOne(
            try db.cachedStatement(sql: """
                SELECT MAX(seq) FROM messages WHERE convo_id = ? AND checkpoint = 1
                AND seq <= (SELECT MIN(processed_seq) FROM members WHERE convo_id = ? AND active = 1)
                """),
            arguments: [convoId, convoId])
    }

    /// The seq below which the convo's messages were forgotten (0: none).
    package static func compactedBefore(_ db: Database, convoId: String) throws -> Int {
        try Int.fetchOne(try db.cachedStatement(sql: "SELECT compacted_before FROM convos WHERE id = ?"), arguments: [convoId]) ?? 0
    }

    /// Forgets the convo's messages below `seq` (their commits included: every active member
    /// processed them) with their `message` events, and records where the kept ones begin.
    /// Run inside the transaction that deletes their records, after checking `seq` against
    /// `compactionPoint`.
    ///
    /// A `message` event only tells its recipients that the message is there to read; once
    /// every active member's cursor is past it, nobody needs it, so it goes now rather than
    /// at the end of the retention window (`EventRetention`). Membership and Welcome events
    /// wait for the window. The events scanned are those stored no later than message `seq`
    /// (`created_at`, the message's `sent_at`), through `event_payloads_by_convo`.
    package static func forgetMessages(_ db: Database, convoId: String, before seq: Int) throws -> Int {
        if let sentAt = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT sent_at FROM messages WHERE convo_id = ? AND seq = ?"), arguments: [convoId, seq]) {
            let doomed = """
                SELECT id FROM event_payloads WHERE convo_id = ? AND created_at <= ? AND kind = 'message'
                AND json_extract(payload, '$.seq') < ?
                """
            try db.execute(cached: "DELETE FROM events WHERE payload_id IN (\(doomed))", arguments: [convoId, sentAt, seq])
            try db.execute(cached: "DELETE FROM event_payloads WHERE id IN (\(doomed))", arguments: [convoId, sentAt, seq])
        }
        try db.execute(cached: "DELETE FROM messages WHERE convo_id = ? AND seq < ?", arguments: [convoId, seq])
        let forgotten = db.changesCount
        try db.execute(cached: "UPDATE convos SET compacted_before = MAX(compacted_before, ?) WHERE id = ?", arguments: [seq, convoId])
        return forgotten
    }
}
