/// The public structure of an RFC 9420 KeyPackage message (§10, §5.3, §7.2), checked without
/// any key or MLS state: what a Delivery Service can verify about a published key package
/// while it holds no MLS secret. ImprintMLS parses the same bytes fully and verifies the
/// signatures; this only says that the bytes are one `MLSMessage` of wire format
/// `mls_key_package`, of the stated cipher suite, with every vector well-formed, the keys
/// and signatures of the suite's sizes, a `key_package` leaf source and nothing after it.
///
/// ```swift
/// let shape = try KeyPackageShape(bytes, cipherSuite: 1)
/// print(shape.credentialType, shape.notAfter)
/// ```
public struct KeyPackageShape: Sendable, Hashable {
    public let cipherSuite: UInt16
    /// 1 = basic, 2 = x509, others as registered.
    public let credentialType: UInt16
    /// The leaf's lifetime, seconds since 1970.
    public let notBefore: UInt64
    public let notAfter: UInt64

    /// Key sizes of the suites RFC 9420 registers (KEM public key, signature public key).
    static func keySizes(of suite: UInt16) -> (kem: Int, signature: Int)? {
        switch suite {
        case 1, 3: (32, 32)      // X25519, Ed25519
        case 2: (65, 65)         // P-256 uncompressed
        case 4, 6: (56, 57)      // X448, Ed448
        case 5: (133, 133)       // P-521
        case 7: (97, 97)         // P-384
        default: nil
        }
    }

    public init(_ bytes: [UInt8], cipherSuite stated: Int) throws(KeyPackageShapeError) {
        var r = WireReader(bytes)
        guard try r.uint16() == 1 else { throw KeyPackageShapeError(.notKeyPackage, "MLSMessage version is not mls10") }
        guard try r.uint16() == 5 else { throw KeyPackageShapeError(.notKeyPackage, "wire_format is not mls_key_package") }
        guard try r.uint16() == 1 else { throw KeyPackageShapeError(.notKeyPackage, "KeyPackage version is not mls10") }
        let suite = try r.uint16()
        guard Int(suite) == stated else { throw KeyPackageShapeError(.suiteMismatch, "the KeyPackage is of suite \(suite), not \(stated)") }
        let sizes = Self.keySizes(of: suite)
        let initKey = try r.opaque()
        // LeafNode
        let encryptionKey = try r.opaque()
        let signatureKey = try r.opaque()
        if let sizes {
            guard initKey.count == sizes.kem, encryptionKey.count == sizes.kem else {
                throw KeyPackageShapeError(.invalidField, "init_key/encryption_key are not \(sizes.kem)-byte keys of suite \(suite)")
            }
            guard signatureKey.count == sizes.signature else {
                throw KeyPackageShapeError(.invalidField, "signature_key is not a \(sizes.signature)-byte key of suite \(suite)")
            }
        } else if initKey.isEmpty || encryptionKey.isEmpty || signatureKey.isEmpty {
            throw KeyPackageShapeError(.invalidField, "an empty key")
        }
        let credentialType = try r.uint16()
        switch credentialType {
        case 1: guard !(try r.opaque()).isEmpty else { throw KeyPackageShapeError(.invalidField, "empty basic identity") }
        case 2: try r.vector { r throws(KeyPackageShapeError) in _ = try r.opaque() }
        default: throw KeyPackageShapeError(.invalidField, "credential type \(credentialType) is not basic or x509")
        }
        // Capabilities: versions, cipher_suites, extensions, proposals, credentials.
        for _ in 0..<5 { try r.vector { r throws(KeyPackageShapeError) in _ = try r.uint16() } }
        guard try r.uint8() == 1 else { throw KeyPackageShapeError(.invalidField, "leaf_node_source is not key_package") }
        let notBefore = try r.uint64(), notAfter = try r.uint64()
        guard notBefore <= notAfter else { throw KeyPackageShapeError(.invalidField, "lifetime ends before it starts") }
        try r.extensions()
        guard !(try r.opaque()).isEmpty else { throw KeyPackageShapeError(.invalidField, "empty leaf signature") }
        // KeyPackage extensions and signature.
        try r.extensions()
        guard !(try r.opaque()).isEmpty else { throw KeyPackageShapeError(.invalidField, "empty signature") }
        guard r.isAtEnd else { throw KeyPackageShapeError(.trailingBytes, "\(r.remaining) bytes after the KeyPackage") }
        self.cipherSuite = suite
        self.credentialType = credentialType
        self.notBefore = notBefore
        self.notAfter = notAfter
    }
}
