import NIOConcurrencyHelpers

/// Remembers `(iss, jti)` pairs in memory until their token could no longer be accepted, so a
/// token is accepted at most once by this process (the SQLite store's guard).
public final class TokenReplayCache: Sendable {
    private struct State {
        var expiries: [String: Int64] = [:]
        var nextPurge: Int64 = 0
    }

    private let state = NIOLockedValueBox(State())
    public let capacity: Int

    public init(capacity: Int = 1_000_000) { self.capacity = capacity }

    /// Records the pair; false when it was already recorded (a replay) or the cache is full.
    public func admit(issuer: String, jti: String, forgetAfter expiry: Int64, now: Int64) -> Bool {
        let key = TokenAdmission.replayKey(issuer: issuer, jti: jti)
        return state.withLockedValue { state in
            if now >= state.nextPurge || state.expiries.count >= capacity {
                state.expiries = state.expiries.filter { $0.value >= now }
                state.nextPurge = now + 10
            }
            if let seen = state.expiries[key], seen >= now { return false }
            guard state.expiries.count < capacity else { return false }
            state.expiries[key] = expiry
            return true
        }
    }

    public var count: Int { state.withLockedValue { $0.expiries.count } }
}
