import Crypto
import Foundation

/// Signs short-lived service-auth JWTs (`alg: EdDSA`) for a `did:key` identity.
public struct ServiceAuthSigner: Sendable {
    public let privateKey: Curve25519.Signing.PrivateKey
    public let identity: DIDKey

    public init(privateKey: Curve25519.Signing.PrivateKey = .init()) {
        self.privateKey = privateKey
        self.identity = DIDKey(publicKey: privateKey.publicKey)
    }

    public var did: String { identity.did }

    /// A token for one call of `method` at `audience`, valid for `lifetime` seconds.
    public func token(
        audience: String, method: String, lifetime: Int64 = 60, now: Date = Date()
    ) throws -> String {
        let iat = Int64(now.timeIntervalSince1970)
        let claims = ServiceAuthClaims(
            iss: did, aud: audience, lxm: method, iat: iat, exp: iat + lifetime,
            jti: UUID().uuidString.lowercased())
        return try sign(header: ServiceAuthHeader(alg: "EdDSA"), claims: claims)
    }

    /// Signs arbitrary header and claims; tests use it to build hostile tokens.
    public func sign<Header: Encodable, Claims: Encodable>(header: Header, claims: Claims) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let signingInput =
            Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
        let signature = try privateKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }
}
