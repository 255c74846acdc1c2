import Foundation
import ImprintDelivery
import ImprintMLS

extension SyncAccount {
    /// The one cipher suite shared documents use: X25519, AES-128-GCM, SHA-256, Ed25519 (the
    /// identity key is an Ed25519 key, so it signs MLS messages too).
    static let suite = CipherSuite.x25519Aes128GcmSha256Ed25519

    /// Publishes fresh key packages when fewer than `options.keyPackageLowWater` unused ones
    /// remain in the key store; returns how many it published. Each one's private keys are in
    /// the key store (sealed) before it is published.
    @discardableResult
    public func topUpKeyPackages() async throws -> Int {
        let unused = try keyStore.keyPackageReferences(for: identity.did).count
        guard unused < options.keyPackageLowWater else { return 0 }
        return try await publishKeyPackages(count: options.keyPackageBatch)
    }

    /// Publishes `count` fresh key packages.
    @discardableResult
    public func publishKeyPackages(count: Int) async throws -> Int {
        for _ in 0..<count {
            let (keyPackage, keys) = try KeyPackage.create(suite: Self.suite, credential: MemberCredential.credential(for: identity.did),
                                                           signaturePrivateKey: signaturePrivateKey)
            try keyStore.saveKeyPackagePrivateKey(StoredKeyPackage(keyPackage: keyPackage, privateKeys: keys).bytes,
                                                  reference: try keyPackage.reference(), for: identity.did)
            var notAfter = UInt64(Date().timeIntervalSince1970) + 89 * 86400
            if case let .keyPackage(lifetime) = keyPackage.leafNode.source { notAfter = min(notAfter, lifetime.notAfter) }
            _ = try await delivery.publishKeyPackage(PublishKeyPackageInput(
                keyPackage: Data(MLSMessage.keyPackage(keyPackage).tlsBytes), cipherSuite: Int(Self.suite.rawValue),
                expiresAt: Date(timeIntervalSince1970: TimeInterval(notAfter))))
        }
        return count
    }

    /// The stored key package `reference` names, with its private keys, or nil.
    func storedKeyPackage(reference: [UInt8]) throws -> StoredKeyPackage? {
        guard let bytes = try keyStore.keyPackagePrivateKey(reference: reference, for: identity.did) else { return nil }
        return try StoredKeyPackage(bytes: bytes, reference: reference)
    }
}
