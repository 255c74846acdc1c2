/// Configuration of an ``MLSGroup``.
public struct MLSGroupConfiguration: Sendable, Hashable, Codable {
    /// Limits on the per-sender hash ratchets.
    public var secretTreeLimits: SecretTreeLimits
    /// How many past epochs keep their resumption PSK (and nothing else).
    public var resumptionPSKWindow: Int
    /// Padding block size for PrivateMessages (0 or 1: no padding).
    public var paddingBlock: Int
    /// How many past epochs keep their message keys, to decrypt late
    /// application messages (0: drop an epoch's keys as soon as it ends).
    public var pastEpochWindow: Int

    public init(secretTreeLimits: SecretTreeLimits = .init(), resumptionPSKWindow: Int = 5, paddingBlock: Int = 32, pastEpochWindow: Int = 1) {
        self.secretTreeLimits = secretTreeLimits
        self.resumptionPSKWindow = resumptionPSKWindow
        self.paddingBlock = paddingBlock
        self.pastEpochWindow = pastEpochWindow
    }
}

/// A source of the current time, in seconds since the Unix epoch.
/// Injectable so that stored KeyPackages can be checked at a chosen time.
public struct MLSClock: Sendable {
    public let now: @Sendable () -> UInt64
    public init(now: @escaping @Sendable () -> UInt64) { self.now = now }
    /// A clock fixed at `time`.
    public static func fixed(_ time: UInt64) -> MLSClock { MLSClock { time } }
}

/// The private keys behind one of our KeyPackages.
public struct KeyPackagePrivateKeys: Sendable, Hashable {
    public var initKey: [UInt8]
    public var encryptionKey: [UInt8]
    public var signatureKey: [UInt8]
    public init(initKey: [UInt8], encryptionKey: [UInt8], signatureKey: [UInt8]) {
        self.initKey = initKey
        self.encryptionKey = encryptionKey
        self.signatureKey = signatureKey
    }
}

/// An external sender allowed to propose (the `external_senders` extension).
struct ExternalSender: TLSCodable, Hashable {
    var signatureKey: [UInt8]
    var credential: Credential
    init(from r: inout TLSReader) throws {
        signatureKey = try r.readOpaque()
        credential = try Credential(from: &r)
    }
    func encode(to w: inout TLSWriter) {
        w.writeOpaque(signatureKey)
        credential.encode(to: &w)
    }
}

/// The `required_capabilities` extension.
struct RequiredCapabilities: TLSCodable, Hashable {
    var extensions: [UInt16]
    var proposals: [UInt16]
    var credentials: [UInt16]
    init(from r: inout TLSReader) throws {
        extensions = try r.readVector { try $0.readUInt16() }
        proposals = try r.readVector { try $0.readUInt16() }
        credentials = try r.readVector { try $0.readUInt16() }
    }
    func encode(to w: inout TLSWriter) {
        for l in [extensions, proposals, credentials] { w.writeVector(l) { $0.writeUInt16($1) } }
    }
}
