/// Content types of framed messages.
public enum ContentType: UInt8, Sendable, Hashable {
    case application = 1, proposal = 2, commit = 3
}

/// Wire formats (RFC 9420 §6).
public enum WireFormat: UInt16, Sendable, Hashable {
    case publicMessage = 1, privateMessage = 2, welcome = 3, groupInfo = 4, keyPackage = 5
}

/// The sender of a framed message (RFC 9420 §6).
public enum Sender: TLSCodable, Hashable {
    case member(leafIndex: UInt32)
    case external(senderIndex: UInt32)
    case newMemberProposal
    case newMemberCommit

    public init(from r: inout TLSReader) throws {
        switch try r.readUInt8() {
        case 1: self = .member(leafIndex: try r.readUInt32())
        case 2: self = .external(senderIndex: try r.readUInt32())
        case 3: self = .newMemberProposal
        case 4: self = .newMemberCommit
        case let t: throw MLSError(.invalidValue, "sender type \(t)")
        }
    }

    public func encode(to w: inout TLSWriter) {
        switch self {
        case let .member(i): w.writeUInt8(1); w.writeUInt32(i)
        case let .external(i): w.writeUInt8(2); w.writeUInt32(i)
        case .newMemberProposal: w.writeUInt8(3)
        case .newMemberCommit: w.writeUInt8(4)
        }
    }
}

/// The body of a framed message.
public enum Content: Hashable, Sendable {
    case application([UInt8])
    case proposal(Proposal)
    case commit(Commit)

    public var contentType: ContentType {
        switch self {
        case .application: .application
        case .proposal: .proposal
        case .commit: .commit
        }
    }

    static func decode(type: ContentType, from r: inout TLSReader) throws -> Content {
        switch type {
        case .application: .application(try r.readOpaque())
        case .proposal: .proposal(try Proposal(from: &r))
        case .commit: .commit(try Commit(from: &r))
        }
    }

    func encodeBody(to w: inout TLSWriter) {
        switch self {
        case let .application(d): w.writeOpaque(d)
        case let .proposal(p): p.encode(to: &w)
        case let .commit(c): c.encode(to: &w)
        }
    }
}

func readContentType(_ r: inout TLSReader) throws -> ContentType {
    let b = try r.readUInt8()
    guard let t = ContentType(rawValue: b) else { throw MLSError(.invalidValue, "content type \(b)") }
    return t
}

/// FramedContent (RFC 9420 §6).
public struct FramedContent: TLSCodable, Hashable {
    public var groupID: [UInt8]
    public var epoch: UInt64
    public var sender: Sender
    public var authenticatedData: [UInt8]
    public var content: Content

    public init(groupID: [UInt8], epoch: UInt64, sender: Sender, authenticatedData: [UInt8], content: Content) {
        self.groupID = groupID
        self.epoch = epoch
        self.sender = sender
        self.authenticatedData = authenticatedData
        self.content = content
    }

    public init(from r: inout TLSReader) throws {
        groupID = try r.readOpaque()
        epoch = try r.readUInt64()
        sender = try Sender(from: &r)
        authenticatedData = try r.readOpaque()
        content = try Content.decode(type: try readContentType(&r), from: &r)
    }

    public func encode(to w: inout TLSWriter) {
        w.writeOpaque(groupID)
        w.writeUInt64(epoch)
        sender.encode(to: &w)
        w.writeOpaque(authenticatedData)
        w.writeUInt8(content.contentType.rawValue)
        content.encodeBody(to: &w)
    }
}

/// FramedContentAuthData: signature plus, for commits, the confirmation tag.
public struct FramedContentAuthData: Hashable, Sendable {
    public var signature: [UInt8]
    public var confirmationTag: [UInt8]?

    public init(signature: [UInt8], confirmationTag: [UInt8]?) {
        self.signature = signature
        self.confirmationTag = confirmationTag
    }

    init(from r: inout TLSReader, contentType: ContentType) throws {
        signature = try r.readOpaque()
        confirmationTag = contentType == .commit ? try r.readOpaque() : nil
    }

    func encode(to w: inout TLSWriter) {
        w.writeOpaque(signature)
        if let confirmationTag { w.writeOpaque(confirmationTag) }
    }
}

/// AuthenticatedContent: wire format, content and its authentication.
public struct AuthenticatedContent: TLSCodable, Hashable {
    public var wireFormat: WireFormat
    public var content: FramedContent
    public var auth: FramedContentAuthData

    public init(wireFormat: WireFormat, content: FramedContent, auth: FramedContentAuthData) {
        self.wireFormat = wireFormat
        self.content = content
        self.auth = auth
    }

    public init(from r: inout TLSReader) throws {
        wireFormat = try readWireFormat(&r)
        content = try FramedContent(from: &r)
        auth = try FramedContentAuthData(from: &r, contentType: content.content.contentType)
    }

    public func encode(to w: inout TLSWriter) {
        w.writeUInt16(wireFormat.rawValue)
        content.encode(to: &w)
        auth.encode(to: &w)
    }

    /// ConfirmedTranscriptHashInput: wire_format, content, signature.
    var confirmedTranscriptHashInput: [UInt8] {
        var w = TLSWriter()
        w.writeUInt16(wireFormat.rawValue)
        content.encode(to: &w)
        w.writeOpaque(auth.signature)
        return w.bytes
    }
}

func readWireFormat(_ r: inout TLSReader) throws -> WireFormat {
    let v = try r.readUInt16()
    guard let wf = WireFormat(rawValue: v) else { throw MLSError(.invalidValue, "wire format \(v)") }
    return wf
}

/// PublicMessage (RFC 9420 §6.2).
public struct PublicMessage: TLSCodable, Hashable {
    public var content: FramedContent
    public var auth: FramedContentAuthData
    public var membershipTag: [UInt8]?

    public init(content: FramedContent, auth: FramedContentAuthData, membershipTag: [UInt8]?) {
        self.content = content
        self.auth = auth
        self.membershipTag = membershipTag
    }

    public init(from r: inout TLSReader) throws {
        content = try FramedContent(from: &r)
        auth = try FramedContentAuthData(from: &r, contentType: content.content.contentType)
        if case .member = content.sender { membershipTag = try r.readOpaque() } else { membershipTag = nil }
    }

    public func encode(to w: inout TLSWriter) {
        content.encode(to: &w)
        auth.encode(to: &w)
        if case .member = content.sender { w.writeOpaque(membershipTag ?? []) }
    }
}

/// PrivateMessage (RFC 9420 §6.3).
public struct PrivateMessage: TLSCodable, Hashable {
    public var groupID: [UInt8]
    public var epoch: UInt64
    public var contentType: ContentType
    public var authenticatedData: [UInt8]
    public var encryptedSenderData: [UInt8]
    public var ciphertext: [UInt8]

    public init(groupID: [UInt8], epoch: UInt64, contentType: ContentType, authenticatedData: [UInt8], encryptedSenderData: [UInt8], ciphertext: [UInt8]) {
        self.groupID = groupID
        self.epoch = epoch
        self.contentType = contentType
        self.authenticatedData = authenticatedData
        self.encryptedSenderData = encryptedSenderData
        self.ciphertext = ciphertext
    }

    public init(from r: inout TLSReader) throws {
        groupID = try r.readOpaque()
        epoch = try r.readUInt64()
        contentType = try readContentType(&r)
        authenticatedData = try r.readOpaque()
        encryptedSenderData = try r.readOpaque()
        ciphertext = try r.readOpaque()
    }

    public func encode(to w: inout TLSWriter) {
        w.writeOpaque(groupID)
        w.writeUInt64(epoch)
        w.writeUInt8(contentType.rawValue)
        w.writeOpaque(authenticatedData)
        w.writeOpaque(encryptedSenderData)
        w.writeOpaque(ciphertext)
    }
}

/// The top-level MLS message (RFC 9420 §6).
public enum MLSMessage: TLSCodable, Hashable {
    case publicMessage(PublicMessage)
    case privateMessage(PrivateMessage)
    case welcome(Welcome)
    case groupInfo(GroupInfo)
    case keyPackage(KeyPackage)

    public init(from r: inout TLSReader) throws {
        let version = try r.readUInt16()
        guard version == 1 else { throw MLSError(.invalidValue, "protocol version \(version)") }
        switch try readWireFormat(&r) {
        case .publicMessage: self = .publicMessage(try PublicMessage(from: &r))
        case .privateMessage: self = .privateMessage(try PrivateMessage(from: &r))
        case .welcome: self = .welcome(try Welcome(from: &r))
        case .groupInfo: self = .groupInfo(try GroupInfo(from: &r))
        case .keyPackage: self = .keyPackage(try KeyPackage(from: &r))
        }
    }

    public var wireFormat: WireFormat {
        switch self {
        case .publicMessage: .publicMessage
        case .privateMessage: .privateMessage
        case .welcome: .welcome
        case .groupInfo: .groupInfo
        case .keyPackage: .keyPackage
        }
    }

    public func encode(to w: inout TLSWriter) {
        w.writeUInt16(1)
        w.writeUInt16(wireFormat.rawValue)
        switch self {
        case let .publicMessage(m): m.encode(to: &w)
        case let .privateMessage(m): m.encode(to: &w)
        case let .welcome(m): m.encode(to: &w)
        case let .groupInfo(m): m.encode(to: &w)
        case let .keyPackage(m): m.encode(to: &w)
        }
    }
}
