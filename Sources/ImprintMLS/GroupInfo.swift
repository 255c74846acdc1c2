/// The GroupContext (RFC 9420 §8.1).
public struct GroupContext: TLSCodable, Hashable {
    public var version: UInt16
    public var cipherSuite: CipherSuite
    public var groupID: [UInt8]
    public var epoch: UInt64
    public var treeHash: [UInt8]
    public var confirmedTranscriptHash: [UInt8]
    public var extensions: [Extension]

    public init(version: UInt16 = 1, cipherSuite: CipherSuite, groupID: [UInt8], epoch: UInt64, treeHash: [UInt8],
                confirmedTranscriptHash: [UInt8], extensions: [Extension]) {
        self.version = version
        self.cipherSuite = cipherSuite
        self.groupID = groupID
        self.epoch = epoch
        self.treeHash = treeHash
        self.confirmedTranscriptHash = confirmedTranscriptHash
        self.extensions = extensions
    }

    public init(from r: inout TLSReader) throws {
        version = try r.readUInt16()
        cipherSuite = try CipherSuite(from: &r)
        groupID = try r.readOpaque()
        epoch = try r.readUInt64()
        treeHash = try r.readOpaque()
        confirmedTranscriptHash = try r.readOpaque()
        extensions = try r.readExtensions()
    }

    public func encode(to w: inout TLSWriter) {
        w.writeUInt16(version)
        cipherSuite.encode(to: &w)
        w.writeOpaque(groupID)
        w.writeUInt64(epoch)
        w.writeOpaque(treeHash)
        w.writeOpaque(confirmedTranscriptHash)
        w.writeExtensions(extensions)
    }
}

/// GroupInfo (RFC 9420 §12.4.3).
public struct GroupInfo: TLSCodable, Hashable {
    public var groupContext: GroupContext
    public var extensions: [Extension]
    public var confirmationTag: [UInt8]
    public var signer: UInt32
    public var signature: [UInt8]

    public init(groupContext: GroupContext, extensions: [Extension], confirmationTag: [UInt8], signer: UInt32, signature: [UInt8] = []) {
        self.groupContext = groupContext
        self.extensions = extensions
        self.confirmationTag = confirmationTag
        self.signer = signer
        self.signature = signature
    }

    public init(from r: inout TLSReader) throws {
        groupContext = try GroupContext(from: &r)
        extensions = try r.readExtensions()
        confirmationTag = try r.readOpaque()
        signer = try r.readUInt32()
        signature = try r.readOpaque()
    }

    func encodeContent(to w: inout TLSWriter) {
        groupContext.encode(to: &w)
        w.writeExtensions(extensions)
        w.writeOpaque(confirmationTag)
        w.writeUInt32(signer)
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

    /// Verifies the signature against the signer's signature key.
    public func verifySignature(publicKey: [UInt8]) throws -> Bool {
        try groupContext.cipherSuite.verifyWithLabel(publicKey: publicKey, label: "GroupInfoTBS", content: toBeSigned, signature: signature)
    }

    mutating func sign(signer: SignatureSigner) throws {
        signature = try groupContext.cipherSuite.signWithLabel(signer: signer, label: "GroupInfoTBS", content: toBeSigned)
    }
}
