/// Identifies a pre-shared key (RFC 9420 §8.4).
public struct PreSharedKeyID: TLSCodable, Hashable {
    public enum Kind: Hashable, Sendable {
        case external(pskID: [UInt8])
        case resumption(usage: UInt8, groupID: [UInt8], epoch: UInt64)
    }
    public var kind: Kind
    public var nonce: [UInt8]

    public init(kind: Kind, nonce: [UInt8]) { self.kind = kind; self.nonce = nonce }

    public init(from r: inout TLSReader) throws {
        switch try r.readUInt8() {
        case 1: kind = .external(pskID: try r.readOpaque())
        case 2:
            let usage = try r.readUInt8()
            guard (1 ... 3).contains(usage) else { throw MLSError(.invalidValue, "resumption usage \(usage)") }
            kind = .resumption(usage: usage, groupID: try r.readOpaque(), epoch: try r.readUInt64())
        case let t: throw MLSError(.invalidValue, "psk type \(t)")
        }
        nonce = try r.readOpaque()
    }

    public func encode(to w: inout TLSWriter) {
        switch kind {
        case let .external(id):
            w.writeUInt8(1); w.writeOpaque(id)
        case let .resumption(usage, gid, epoch):
            w.writeUInt8(2); w.writeUInt8(usage); w.writeOpaque(gid); w.writeUInt64(epoch)
        }
        w.writeOpaque(nonce)
    }
}

/// A proposal (RFC 9420 §12.1).
public enum Proposal: TLSCodable, Hashable {
    case add(KeyPackage)
    case update(LeafNode)
    case remove(leafIndex: UInt32)
    case preSharedKey(PreSharedKeyID)
    case reInit(groupID: [UInt8], version: UInt16, cipherSuite: CipherSuite, extensions: [Extension])
    case externalInit(kemOutput: [UInt8])
    case groupContextExtensions([Extension])

    /// The proposal type code.
    public var type: UInt16 {
        switch self {
        case .add: 1
        case .update: 2
        case .remove: 3
        case .preSharedKey: 4
        case .reInit: 5
        case .externalInit: 6
        case .groupContextExtensions: 7
        }
    }

    public init(from r: inout TLSReader) throws {
        switch try r.readUInt16() {
        case 1: self = .add(try KeyPackage(from: &r))
        case 2: self = .update(try LeafNode(from: &r))
        case 3: self = .remove(leafIndex: try r.readUInt32())
        case 4: self = .preSharedKey(try PreSharedKeyID(from: &r))
        case 5: self = .reInit(groupID: try r.readOpaque(), version: try r.readUInt16(), cipherSuite: try CipherSuite(from: &r), extensions: try r.readExtensions())
        case 6: self = .externalInit(kemOutput: try r.readOpaque())
        case 7: self = .groupContextExtensions(try r.readExtensions())
        case let t: throw MLSError(.invalidValue, "unsupported proposal type \(t)")
        }
    }

    public func encode(to w: inout TLSWriter) {
        w.writeUInt16(type)
        switch self {
        case let .add(kp): kp.encode(to: &w)
        case let .update(leaf): leaf.encode(to: &w)
        case let .remove(i): w.writeUInt32(i)
        case let .preSharedKey(id): id.encode(to: &w)
        case let .reInit(gid, v, cs, exts):
            w.writeOpaque(gid); w.writeUInt16(v); cs.encode(to: &w); w.writeExtensions(exts)
        case let .externalInit(k): w.writeOpaque(k)
        case let .groupContextExtensions(exts): w.writeExtensions(exts)
        }
    }
}

/// A proposal carried inline in a commit or referenced by its ProposalRef.
public enum ProposalOrRef: TLSCodable, Hashable {
    case proposal(Proposal)
    case reference([UInt8])

    public init(from r: inout TLSReader) throws {
        switch try r.readUInt8() {
        case 1: self = .proposal(try Proposal(from: &r))
        case 2: self = .reference(try r.readOpaque())
        case let t: throw MLSError(.invalidValue, "ProposalOrRef type \(t)")
        }
    }

    public func encode(to w: inout TLSWriter) {
        switch self {
        case let .proposal(p): w.writeUInt8(1); p.encode(to: &w)
        case let .reference(ref): w.writeUInt8(2); w.writeOpaque(ref)
        }
    }
}
