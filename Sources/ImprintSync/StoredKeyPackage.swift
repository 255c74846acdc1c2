import ImprintMLS

/// A published KeyPackage together with its private keys, as one sealed key-store secret
/// (`KeyStore.saveKeyPackagePrivateKey`, named by the KeyPackageRef). The signature key is
/// not stored here: it is the identity's, kept once.
///
/// Layout: TLS `opaque` vectors `key_package || init_private_key || encryption_private_key`.
public struct StoredKeyPackage: Sendable, Hashable {
    public var keyPackage: KeyPackage
    public var initKey: [UInt8]
    public var encryptionKey: [UInt8]

    public init(keyPackage: KeyPackage, privateKeys: KeyPackagePrivateKeys) {
        self.keyPackage = keyPackage
        self.initKey = privateKeys.initKey
        self.encryptionKey = privateKeys.encryptionKey
    }

    /// The secret's bytes.
    public var bytes: [UInt8] {
        var w = TLSWriter()
        w.writeOpaque(keyPackage.tlsBytes)
        w.writeOpaque(initKey)
        w.writeOpaque(encryptionKey)
        return w.bytes
    }

    /// Decodes a stored secret and checks that it is the key package `reference` names.
    /// Throws `MLSError` for damaged bytes or a reference that does not match.
    public init(bytes: [UInt8], reference: [UInt8]) throws {
        var r = TLSReader(bytes)
        keyPackage = try KeyPackage(tlsBytes: try r.readOpaque())
        initKey = try r.readOpaque()
        encryptionKey = try r.readOpaque()
        try r.finish()
        guard try keyPackage.reference() == reference else {
            throw MLSError(.invalidValue, "stored key package does not match its reference")
        }
    }

    /// The private keys with `signatureKey`, as `MLSGroup.join` takes them.
    public func privateKeys(signatureKey: [UInt8]) -> KeyPackagePrivateKeys {
        KeyPackagePrivateKeys(initKey: initKey, encryptionKey: encryptionKey, signatureKey: signatureKey)
    }
}
