import Crypto
import Foundation
import ImprintEncoding

/// A `did:key` identity for an Ed25519 key:
/// `did:key:z<base58btc(0xed 0x01 ‖ 32-byte public key)>`.
public struct DIDKey: Hashable, Sendable, CustomStringConvertible {
    static let prefix = "did:key:z"
    static let ed25519Multicodec: [UInt8] = [0xed, 0x01]

    public let publicKeyBytes: [UInt8]
    public let did: String

    public init(publicKey: Curve25519.Signing.PublicKey) {
        publicKeyBytes = Array(publicKey.rawRepresentation)
        did = Self.prefix + Base58BTC.encode(Self.ed25519Multicodec + publicKeyBytes)
    }

    public init(did: String) throws {
        guard did.hasPrefix(Self.prefix), did.utf8.count <= 128 else {
            throw DIDKeyError(reason: "not a base58btc did:key")
        }
        guard let decoded = Base58BTC.decode(String(did.dropFirst(Self.prefix.count))) else {
            throw DIDKeyError(reason: "invalid base58btc")
        }
        guard decoded.count == 34, Array(decoded.prefix(2)) == Self.ed25519Multicodec else {
            throw DIDKeyError(reason: "not an Ed25519 multicodec key")
        }
        publicKeyBytes = Array(decoded.dropFirst(2))
        self.did = did
    }

    public var publicKey: Curve25519.Signing.PublicKey {
        // 32 bytes checked in init, so this cannot fail.
        try! Curve25519.Signing.PublicKey(rawRepresentation: publicKeyBytes)
    }

    public var description: String { did }
}

public struct DIDKeyError: Error, Hashable, Sendable {
    public var reason: String
}
