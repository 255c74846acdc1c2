/// A service-auth token whose signature and claims are verified but whose `jti` has not yet
/// been recorded by the replay guard.
///
/// Most methods admit it at once (`ServiceAuthVerifier.admit`). `sendMessage` hands it to the
/// store instead, which records it in the same transaction as the message: on PostgreSQL that
/// saves a round trip per request while staying exact across instances.
public struct TokenAdmission: Sendable, Hashable {
    /// The caller DID (`iss`).
    public var issuer: String
    public var jti: String
    /// Seconds since 1970 after which the token can no longer be accepted, so the pair can be forgotten.
    public var forgetAfter: Int64
    /// The verifier's clock, in seconds since 1970.
    public var now: Int64

    public init(issuer: String, jti: String, forgetAfter: Int64, now: Int64) {
        self.issuer = issuer
        self.jti = jti
        self.forgetAfter = forgetAfter
        self.now = now
    }

    /// The key replay guards store.
    public var replayKey: String { Self.replayKey(issuer: issuer, jti: jti) }

    /// Issuer and jti joined by a unit separator, which a DID cannot contain, so distinct pairs
    /// never share a key.
    public static func replayKey(issuer: String, jti: String) -> String { issuer + "\u{1F}" + jti }

    /// Records the pair with `guard`; a replay is a 401 `InvalidToken`.
    public func admit(with guard: any TokenReplayGuard) async throws {
        guard try await `guard`.admit(issuer: issuer, jti: jti, forgetAfter: forgetAfter, now: now) else {
            throw DeliveryError.tokenReplayed()
        }
    }
}
