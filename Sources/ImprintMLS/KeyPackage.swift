/// A KeyPackage (RFC 9420 §10): a prospective member's init key and leaf.
public struct KeyPackage: TLSCodable, Hashable {
    public var version: UInt16
    public var cipherSuite: CipherSuite
    public var initKey: [UInt8]
    public var leafNode: LeafNode
    public var extensions: [Extension]
    public var signature: [UInt8]

    public init(from r: inout TLSReader) throws {
        version = try r.readUInt16()
        cipherSuite = try CipherSuite(from: &r)
        initKey = try r.readOpaque()
        leafNode = try LeafNode(from: &r)
        extensions = try r.readExtensions()
        signature = try r.readOpaque()
    }

    init(version: UInt16, cipherSuite: CipherSuite, initKey: [UInt8], leafNode: LeafNode, extensions: [Extension], signature: [UInt8]) {
        self.version = version
        self.cipherSuite = cipherSuite
        self.initKey = initKey
        self.leafNode = leafNode
        self.extensions = extensions
        self.signature = signature
    }

    func encodeContent(to w: inout TLSWriter) {
        w.writeUInt16(version)
        cipherSuite.encode(to: &w)
        w.writeOpaque(initKey)
        leafNode.encode(to: &w)
        w.writeExtensions(extensions)
    }

    public func encode(to w: inout TLSWriter) {
        encodeContent(to: &w)
        w.writeOpaque(signature)
    }

    var toBeSigned: [UInt8] {
        var w = TLSWriter()
        encodeContent(to: &w)
        return w.bytes
    }

    /// KeyPackageRef = RefHash("MLS 1.0 KeyPackage Reference", KeyPackage).
    public func reference() throws -> [UInt8] {
        try cipherSuite.refHash(label: Array("MLS 1.0 KeyPackage Reference".utf8), value: tlsBytes)
    }

    /// Validates the KeyPackage (RFC 9420 §10.1) against the group's suite and
    /// the current time (seconds since the Unix epoch; injectable for tests).
    public func validate(suite: CipherSuite, now: UInt64) throws {
        try validate(suite: suite, now: now, checked: nil)
    }

    /// Outcome of verifying a KeyPackage's two signatures.
    struct SignatureChecks: Sendable {
        var keyPackage: Bool
        var leaf: Bool
    }

    /// Verifies the KeyPackage signature and its leaf's signature, so that a
    /// batch can be verified in parallel ahead of ``validate(suite:now:checked:)``.
    /// Nil if the KeyPackage is not of `suite` (validation refuses it anyway).
    func signatureChecks(suite: CipherSuite) -> SignatureChecks? {
        guard cipherSuite == suite,
              let kp = try? cipherSuite.verifyWithLabel(publicKey: leafNode.signatureKey, label: "KeyPackageTBS", content: toBeSigned, signature: signature),
              let leaf = try? leafNode.verifySignature(suite: suite, groupID: [], leafIndex: 0)
        else { return nil }
        return SignatureChecks(keyPackage: kp, leaf: leaf)
    }

    /// ``validate(suite:now:)`` using signature outcomes already computed by
    /// ``signatureChecks(suite:)`` when given (the same checks in the same order).
    func validate(suite: CipherSuite, now: UInt64, checked: SignatureChecks?) throws {
        guard version == 1 else { throw MLSError(.invalidKeyPackage, "version \(version)") }
        guard cipherSuite == suite else { throw MLSError(.invalidKeyPackage, "cipher suite mismatch") }
        guard try checked?.keyPackage
            ?? cipherSuite.verifyWithLabel(publicKey: leafNode.signatureKey, label: "KeyPackageTBS", content: toBeSigned, signature: signature) else {
            throw MLSError(.signatureInvalid, "KeyPackage signature")
        }
        guard case let .keyPackage(lifetime) = leafNode.source else {
            throw MLSError(.invalidKeyPackage, "leaf_node_source is not key_package")
        }
        guard lifetime.notBefore <= now, now <= lifetime.notAfter else {
            throw MLSError(.invalidKeyPackage, "lifetime does not cover now")
        }
        guard try checked?.leaf ?? leafNode.verifySignature(suite: suite, groupID: [], leafIndex: 0) else {
            throw MLSError(.signatureInvalid, "KeyPackage leaf signature")
        }
        guard initKey != leafNode.encryptionKey else { throw MLSError(.invalidKeyPackage, "init_key equals encryption_key") }
    }
}
