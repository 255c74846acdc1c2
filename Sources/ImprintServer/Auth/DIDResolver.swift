import Crypto
import ImprintDelivery

/// Finds the Ed25519 key a caller DID signs with. `did:key` resolves from the DID itself;
/// `did:web` or atproto PLC resolvers can be added as further conformances.
public protocol DIDResolver: Sendable {
    /// Nil when this resolver does not handle the DID's method.
    func signingKey(for did: String) async throws -> Curve25519.Signing.PublicKey?
}

/// Resolves `did:key` Ed25519 DIDs with no network. Decoding the base58 key and loading it
/// costs more than a hash lookup, and a caller sends many requests, so keys are memoized
/// (valid ones only: a garbled DID is rejected anew each time).
public struct DIDKeyResolver: DIDResolver {
    private let keys = BoundedCache<String, Curve25519.Signing.PublicKey>(capacity: 10_000)

    public init() {}

    public func signingKey(for did: String) async throws -> Curve25519.Signing.PublicKey? {
        guard did.hasPrefix("did:key:") else { return nil }
        do {
            return try keys.value(for: did) { try DIDKey(did: did).publicKey }
        } catch {
            throw DeliveryError.invalidToken("iss is not a valid Ed25519 did:key")
        }
    }
}

/// Tries resolvers in order; an unsupported DID method is an `InvalidToken`.
public struct ChainedDIDResolver: DIDResolver {
    public let resolvers: [any DIDResolver]

    public init(_ resolvers: [any DIDResolver]) { self.resolvers = resolvers }

    public func signingKey(for did: String) async throws -> Curve25519.Signing.PublicKey? {
        for resolver in resolvers {
            if let key = try await resolver.signingKey(for: did) { return key }
        }
        throw DeliveryError.invalidToken("unsupported DID method")
    }
}
