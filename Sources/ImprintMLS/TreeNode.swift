/// An intermediate node of the ratchet tree (RFC 9420 §7.1).
public struct ParentNode: TLSCodable, Hashable {
    public var encryptionKey: [UInt8]
    public var parentHash: [UInt8]
    public var unmergedLeaves: [UInt32]

    public init(encryptionKey: [UInt8], parentHash: [UInt8], unmergedLeaves: [UInt32]) {
        self.encryptionKey = encryptionKey
        self.parentHash = parentHash
        self.unmergedLeaves = unmergedLeaves
    }

    public init(from r: inout TLSReader) throws {
        encryptionKey = try r.readOpaque()
        parentHash = try r.readOpaque()
        unmergedLeaves = try r.readVector { try $0.readUInt32() }
    }

    public func encode(to w: inout TLSWriter) {
        w.writeOpaque(encryptionKey)
        w.writeOpaque(parentHash)
        w.writeVector(unmergedLeaves) { $0.writeUInt32($1) }
    }
}

/// A non-blank ratchet-tree node.
public enum Node: TLSCodable, Hashable {
    case leaf(LeafNode)
    case parent(ParentNode)

    public init(from r: inout TLSReader) throws {
        switch try r.readUInt8() {
        case 1: self = .leaf(try LeafNode(from: &r))
        case 2: self = .parent(try ParentNode(from: &r))
        case let t: throw MLSError(.invalidValue, "node type \(t)")
        }
    }

    public func encode(to w: inout TLSWriter) {
        switch self {
        case let .leaf(l): w.writeUInt8(1); l.encode(to: &w)
        case let .parent(p): w.writeUInt8(2); p.encode(to: &w)
        }
    }

    var encryptionKey: [UInt8] {
        switch self {
        case let .leaf(l): l.encryptionKey
        case let .parent(p): p.encryptionKey
        }
    }
}

/// The ratchet-tree wire form `optional<Node> ratchet_tree<V>` (RFC 9420 §12.4.3.3).
public struct RatchetTreeNodes: TLSCodable, Hashable {
    public var nodes: [Node?]
    public init(nodes: [Node?]) { self.nodes = nodes }
    public init(from r: inout TLSReader) throws {
        nodes = try r.readVector { try $0.readOptional { try Node(from: &$0) } }
    }
    public func encode(to w: inout TLSWriter) {
        w.writeVector(nodes) { w, n in w.writeOptional(n) { $1.encode(to: &$0) } }
    }
}
