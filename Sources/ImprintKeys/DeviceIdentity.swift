import Crypto
import ImprintEd25519

/// A device's long-term identity: an Ed25519 key pair named by its `did:key`.
///
/// It signs the Delivery Service's and zone service's tokens and is the MLS credential's
/// identity. `KeyStore.deviceIdentity()` creates it once per store (one store per
/// `IMPRINT_HOME`) and returns the same one ever after.
public struct DeviceIdentity: Sendable {
    /// The signing key; never leaves the key store except in memory.
    public let signingKey: Curve25519.Signing.PrivateKey
    /// `did:key:z6Mk…` of the public key.
    public let did: DIDKey

    public init(signingKey: Curve25519.Signing.PrivateKey) {
        self.signingKey = signingKey
        self.did = DIDKey(publicKey: signingKey.publicKey)
    }

    /// A fresh random identity.
    public static func generate() -> DeviceIdentity {
        DeviceIdentity(signingKey: Curve25519.Signing.PrivateKey())
    }
}
