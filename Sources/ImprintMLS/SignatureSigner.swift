import Crypto

/// A signature private key with its swift-crypto key object built once.
///
/// Building an Ed25519 key from its 32-byte seed costs a scalar
/// multiplication (about a fifth of a signature); a group keeps one signer
/// for every message it signs.
struct SignatureSigner: Sendable {
    /// The private key as stored (Ed25519 seed, or P-256 scalar).
    let privateKey: [UInt8]
    private let key: Key

    private enum Key: Sendable {
        case ed25519(Curve25519.Signing.PrivateKey)
        case p256(P256.Signing.PrivateKey)
    }

    init(suite: CipherSuite, privateKey: [UInt8]) throws {
        try suite.requireSupported()
        self.privateKey = privateKey
        do {
            key = suite.rawValue == 2 ? .p256(try P256.Signing.PrivateKey(rawRepresentation: privateKey))
                : .ed25519(try Curve25519.Signing.PrivateKey(rawRepresentation: privateKey))
        } catch {
            throw MLSError(.invalidKey, "signature private key")
        }
    }

    /// Signs `message` (Ed25519, or ECDSA P-256 with SHA-256 in DER form).
    func sign(_ message: [UInt8]) throws -> [UInt8] {
        do {
            switch key {
            case let .ed25519(k): return Array(try k.signature(for: message))
            case let .p256(k): return Array(try k.signature(for: message).derRepresentation)
            }
        } catch {
            throw MLSError(.cryptoFailure, "signing: \(error)")
        }
    }
}
