/// Accepts each `(iss, jti)` once while its token could still be accepted.
/// In memory for a single instance; in the database when instances share one (PostgreSQL).
public protocol TokenReplayGuard: Sendable {
    /// Records the pair; false when it was recorded before and has not expired (a replay).
    func admit(issuer: String, jti: String, forgetAfter expiry: Int64, now: Int64) async throws -> Bool
}

extension TokenReplayCache: TokenReplayGuard {}
