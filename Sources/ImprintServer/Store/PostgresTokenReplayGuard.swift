import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// The replay guard shared by every instance on one PostgreSQL database: a token accepted by
/// one instance is a replay on all others. Rows live in an UNLOGGED table (losing them in a
/// crash only forgets tokens that expire within 6 minutes anyway) and are purged as they expire.
public final class PostgresTokenReplayGuard: TokenReplayGuard {
    let client: PostgresClient
    let logger: Logger
    private let nextPurge = NIOLockedValueBox<Int64>(0)

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func admit(issuer: String, jti: String, forgetAfter expiry: Int64, now: Int64) async throws -> Bool {
        try await purgeExpiredIfDue(now: now)
        let key = TokenAdmission.replayKey(issuer: issuer, jti: jti)
        let rows = try await client.query(
            """
            INSERT INTO token_replays (key, expires_at) VALUES (\(key), \(expiry))
            ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE token_replays.expires_at < \(now)
            RETURNING expires_at
            """, logger: logger)
        var admitted = false
        for try await _ in rows.decode(Int64.self) { admitted = true }
        return admitted
    }

    /// Deletes expired keys, at most once per 30 s per instance. Callers that record keys
    /// themselves (`imprint_send_message`) call it too, so the table stays bounded by the
    /// tokens of the last few minutes whichever path admitted them.
    func purgeExpiredIfDue(now: Int64) async throws {
        let purge = nextPurge.withLockedValue { next in
            guard now >= next else { return false }
            next = now + 30
            return true
        }
        if purge {
            try await client.query("DELETE FROM token_replays WHERE expires_at < \(now)", logger: logger)
        }
    }
}
