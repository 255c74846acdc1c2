/// Every method of the Delivery Service API, with its NSID and HTTP kind.
public enum DeliveryMethod: String, CaseIterable, Sendable {
    case publishKeyPackage
    case getKeyPackages
    case createConvo
    case getConvos
    case addMembers
    case getWelcome
    case confirmWelcome
    case removeMember
    case leaveConvo
    case sendMessage
    case getMessages
    case registerStorage
    case subscribeConvoEvents
    /// v1.1.
    case setAdmins
    /// v1.2: ephemeral messages (presence), relayed to subscribed members and stored nowhere.
    case sendEphemeral
    /// v1.2: the ephemeral messages of one convo, as server-sent events, from now on.
    case subscribeEphemeral
    /// v1.3: the caller's processed cursor in one convo (compaction waits for every member's).
    case updateCursor
    /// v1.3: marks one of the caller's application messages as a checkpoint (a snapshot).
    case markCheckpoint
    /// v1.3: every active member's processed cursor and the convo's compaction point.
    case getCursors
    /// v1.5: one WebSocket per member and convo for ephemeral messages, both ways
    /// (``EphemeralSocketFrame``), authenticated once at the upgrade.
    case ephemeralSocket

    /// NSID prefix shared by every method.
    public static let namespace = "blue.catbird.mls"

    /// The method's NSID, e.g. `blue.catbird.mls.sendMessage`; also the JWT `lxm` claim.
    public var nsid: String { "\(Self.namespace).\(rawValue)" }

    /// The XRPC path, `/xrpc/<nsid>`.
    public var path: String { "/xrpc/\(nsid)" }

    /// Queries are `GET`, procedures are `POST`.
    public var isProcedure: Bool {
        switch self {
        case .getKeyPackages, .getConvos, .getWelcome, .getMessages, .subscribeConvoEvents, .subscribeEphemeral, .getCursors, .ephemeralSocket: false
        default: true
        }
    }

    public init?(nsid: String) {
        let prefix = Self.namespace + "."
        guard nsid.hasPrefix(prefix) else { return nil }
        self.init(rawValue: String(nsid.dropFirst(prefix.count)))
    }
}

/// Paths outside the method namespace.
public enum DeliveryPath {
    public static let health = "/xrpc/_health"
    public static let metrics = "/metrics"
    public static let openAPI = "/openapi.json"
}
