/// HPKE ciphertext (RFC 9420 §7.6).
public struct HPKECiphertext: TLSCodable, Hashable {
    public var kemOutput: [UInt8]
    public var ciphertext: [UInt8]
    public init(kemOutput: [UInt8], ciphertext: [UInt8]) { self.kemOutput = kemOutput; self.ciphertext = ciphertext }
    public init(from r: inout TLSReader) throws {
        kemOutput = try r.readOpaque()
        ciphertext = try r.readOpaque()
    }
    public func encode(to w: inout TLSWriter) {
        w.writeOpaque(kemOutput)
        w.writeOpaque(ciphertext)
    }
}

/// One node of an UpdatePath.
public struct UpdatePathNode: TLSCodable, Hashable {
    public var encryptionKey: [UInt8]
    public var encryptedPathSecret: [HPKECiphertext]
    public init(encryptionKey: [UInt8], encryptedPathSecret: [HPKECiphertext]) {
        self.encryptionKey = encryptionKey
        self.encryptedPathSecret = encryptedPathSecret
    }
    public init(from r: inout TLSReader) throws {
        encryptionKey = try r.readOpaque()
        encryptedPathSecret = try r.readList()
    }
    public func encode(to w: inout TLSWriter) {
        w.writeOpaque(encryptionKey)
        w.writeList(encryptedPathSecret)
    }
}

/// A TreeKEM UpdatePath (RFC 9420 §7.6).
public struct UpdatePath: TLSCodable, Hashable {
    public var leafNode: LeafNode
    public var nodes: [UpdatePathNode]
    public init(leafNode: LeafNode, nodes: [UpdatePathNode]) { self.leafNode = leafNode; self.nodes = nodes }
    public init(from r: inout TLSReader) throws {
        leafNode = try LeafNode(from: &r)
        nodes = try r.readList()
    }
    public func encode(to w: inout TLSWriter) {
        leafNode.encode(to: &w)
        w.writeList(nodes)
    }
}

/// A Commit (RFC 9420 §12.4).
public struct Commit: TLSCodable, Hashable {
    public var proposals: [ProposalOrRef]
    public var path: UpdatePath?
    public init(proposals: [ProposalOrRef], path: UpdatePath?) { self.proposals = proposals; self.path = path }
    public init(from r: inout TLSReader) throws {
        proposals = try r.readList()
        path = try r.readOptional { try UpdatePath(from: &$0) }
    }
    public func encode(to w: inout TLSWriter) {
        w.writeList(proposals)
        w.writeOptional(path) { $1.encode(to: &$0) }
    }
}
