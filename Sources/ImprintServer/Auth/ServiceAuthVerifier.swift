import Crypto
import Foundation
import ImprintDelivery

/// Verifies `Authorization: Bearer <JWT>` service-auth tokens as the contract describes:
/// EdDSA over `header.claims`, `aud` = this service, `lxm` = the method, `iat`/`exp` within
/// 60 s of skew, lifetime ≤ 300 s, and each `jti` accepted once.
public struct ServiceAuthVerifier: Sendable {
    public static let maxLifetime: Int64 = 300
    public static let clockSkew: Int64 = 60
    static let maxTokenLength = 8192

    public let serviceDID: String
    public let resolver: any DIDResolver
    public let replayGuard: any TokenReplayGuard

    public init(
        serviceDID: String, replayGuard: any TokenReplayGuard,
        resolver: any DIDResolver = ChainedDIDResolver([DIDKeyResolver()])
    ) {
        self.serviceDID = serviceDID
        self.resolver = resolver
        self.replayGuard = replayGuard
    }

    /// The caller DID, or a 401 `DeliveryError`.
    public func authenticate(authorization: String?, method: DeliveryMethod, now: Date = Date()) async throws -> String {
        guard let authorization, !authorization.isEmpty else { throw DeliveryError.authRequired() }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw DeliveryError.authRequired("expected a Bearer token")
        }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        guard token.utf8.count <= Self.maxTokenLength else { throw DeliveryError.invalidToken("token too long") }
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else { throw DeliveryError.invalidToken("not a compact JWS") }
        guard let headerBytes = Base64URL.decode(segments[0]),
              let header = try? JSONDecoder().decode(ServiceAuthHeader.self, from: headerBytes)
        else { throw DeliveryError.invalidToken("garbled header") }
        guard header.alg == "EdDSA" else { throw DeliveryError.invalidToken("unsupported alg") }
        guard header.typ == nil || header.typ == "JWT" else { throw DeliveryError.invalidToken("unsupported typ") }
        guard let claimsBytes = Base64URL.decode(segments[1]),
              let claims = try? JSONDecoder().decode(ServiceAuthClaims.self, from: claimsBytes)
        else { throw DeliveryError.invalidToken("garbled claims") }
        guard let signature = Base64URL.decode(segments[2]), signature.count == 64 else {
            throw DeliveryError.invalidToken("garbled signature")
        }
        guard let key = try await resolver.signingKey(for: claims.iss) else {
            throw DeliveryError.invalidToken("unsupported DID method")
        }
        let signingInput = Data(token.utf8.prefix(segments[0].utf8.count + 1 + segments[1].utf8.count))
        guard key.isValidSignature(signature, for: signingInput) else { throw DeliveryError.invalidToken("bad signature") }

        guard claims.aud == serviceDID else { throw DeliveryError.invalidToken("wrong audience") }
        guard claims.lxm == method.nsid else { throw DeliveryError.invalidToken("token is for another method") }
        let seconds = Int64(now.timeIntervalSince1970)
        guard claims.exp > claims.iat else { throw DeliveryError.invalidToken("exp before iat") }
        guard claims.exp - claims.iat <= Self.maxLifetime else { throw DeliveryError.invalidToken("lifetime over 300 s") }
        guard claims.iat <= seconds + Self.clockSkew else { throw DeliveryError.invalidToken("token not yet valid") }
        guard claims.exp + Self.clockSkew > seconds else { throw DeliveryError.invalidToken("token expired") }
        guard !claims.jti.isEmpty, claims.jti.utf8.count <= 256 else { throw DeliveryError.invalidToken("bad jti") }
        guard try await replayGuard.admit(issuer: claims.iss, jti: claims.jti, forgetAfter: claims.exp + Self.clockSkew, now: seconds) else {
            throw DeliveryError.invalidToken("token replayed")
        }
        return claims.iss
    }
}
