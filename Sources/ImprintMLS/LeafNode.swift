/// Capabilities advertised by a member (RFC 9420 §7.2).
public struct Capabilities: TLSCodable, Hashable {
    public var versions: [UInt16]
    public var cipherSuites: [UInt16]
    public var extensions: [UInt16]
    public var proposals: [UInt16]
    public var credentials: [UInt16]

    public init(versions: [UInt16] = [1], cipherSuites: [UInt16], extensions: [UInt16] = [], proposals: [UInt16] = [], credentials: [UInt16] = [1]) {
        self.versions = versions
        self.cipherSuites = cipherSuites
        self.extensions = extensions
        self.proposals = proposals
        self.credentials = credentials
    }

    public init(from r: inout TLSReader) throws {
        versions = try r.readVector { try $0.readUInt16() }
        cipherSuites = try r.readVector { try $0.readUInt16() }
        extensions = try r.readVector { try $0.readUInt16() }
        proposals = try r.readVector { try $0.readUInt16() }
        credentials = try r.readVector { try $0.readUInt16() }
    }

    public func encode(to w: inout TLSWriter) {
        for list in [versions, cipherSuites, extensions, proposals, credentials] {
            w.writeVector(list) { $0.writeUInt16($1) }
        }
    }
}

/// Validity period of a KeyPackage leaf, in seconds since the Unix epoch.
public struct Lifetime: TLSCodable, Hashable {
    public var notBefore: UInt64
    public var notAfter: UInt64
    public init(notBefore: UInt64, notAfter: UInt64) { self.notBefore = notBefore; self.notAfter = notAfter }
    public init(from r: inout TLSReader) throws {
        notBefore = try r.readUInt64()
        notAfter = try r.readUInt64()
    }
    public func encode(to w: inout TLSWriter) {
        w.writeUInt64(notBefore)
        w.writeUInt64(notAfter)
    }
}

/// How a LeafNode came to be (RFC 9420 §7.2) and its source-specific field.
public enum LeafNodeSource: Hashable, Sendable {
    case keyPackage(Lifetime)
    case update
    case commit(parentHash: [UInt8])

    var code: UInt8 {
        switch self {
        case .keyPackage: 1
        case .update: 2
        case .commit: 3
        }
    }
}

/// A leaf of the ratchet tree (RFC 9420 §7.2).
public struct LeafNode: TLSCodable, Hashable {
    public var encryptionKey: [UInt8]
    public var signatureKey: [UInt8]
    public var credential: Credential
    public var capabilities: Capabilities
    public var source: LeafNodeSource
    public var extensions: [Extension]
    public var signature: [UInt8]

    public init(encryptionKey: [UInt8], signatureKey: [UInt8], credential: Credential, capabilities: Capabilities,
                source: LeafNodeSource, extensions: [Extension], signature: [UInt8] = []) {
        self.encryptionKey = encryptionKey
        self.signatureKey = signatureKey
        self.credential = credential
        self.capabilities = capabilities
        self.source = source
        self.extensions = extensions
        self.signature = signature
    }

    public init(from r: inout TLSReader) throws {
        encryptionKey = try r.readOpaque()
        signatureKey = try r.readOpaque()
        credential = try Credential(from: &r)
        capabilities = try Capabilities(from: &r)
        switch try r.readUInt8() {
        case 1: source = .keyPackage(try Lifetime(from: &r))
        case 2: source = .update
        case 3: source = .commit(parentHash: try r.readOpaque())
        case let s: throw MLSError(.invalidValue, "leaf_node_source \(s)")
        }
        extensions = try r.readExtensions()
        signature = try r.readOpaque()
    }

    func encodeContent(to w: inout TLSWriter) {
        w.writeOpaque(encryptionKey)
        w.writeOpaque(signatureKey)
        credential.encode(to: &w)
        capabilities.encode(to: &w)
        w.writeUInt8(source.code)
        switch source {
        case let .keyPackage(l): l.encode(to: &w)
        case .update: break
        case let .commit(ph): w.writeOpaque(ph)
        }
        w.writeExtensions(extensions)
    }

    public func encode(to w: inout TLSWriter) {
        encodeContent(to: &w)
        w.writeOpaque(signature)
    }

    /// LeafNodeTBS: the signed content. `groupID`/`leafIndex` are required for update and commit sources.
    func toBeSigned(groupID: [UInt8], leafIndex: UInt32) -> [UInt8] {
        var w = TLSWriter()
        encodeContent(to: &w)
        switch source {
        case .keyPackage: break
        case .update, .commit:
            w.writeOpaque(groupID)
            w.writeUInt32(leafIndex)
        }
        return w.bytes
    }

    /// Verifies the leaf's signature with its own signature key.
    public func verifySignature(suite: CipherSuite, groupID: [UInt8], leafIndex: UInt32) throws -> Bool {
        try suite.verifyWithLabel(publicKey: signatureKey, label: "LeafNodeTBS",
                                  content: toBeSigned(groupID: groupID, leafIndex: leafIndex), signature: signature)
    }

    /// Signs the leaf (replacing ``signature``).
    public mutating func sign(suite: CipherSuite, signaturePrivateKey: [UInt8], groupID: [UInt8], leafIndex: UInt32) throws {
        try sign(suite: suite, signer: SignatureSigner(suite: suite, privateKey: signaturePrivateKey), groupID: groupID, leafIndex: leafIndex)
    }

    mutating func sign(suite: CipherSuite, signer: SignatureSigner, groupID: [UInt8], leafIndex: UInt32) throws {
        signature = try suite.signWithLabel(signer: signer, label: "LeafNodeTBS", content: toBeSigned(groupID: groupID, leafIndex: leafIndex))
    }

    var parentHash: [UInt8]? {
        if case let .commit(ph) = source { return ph }
        return nil
    }
}
