/// `Storage`: where a member wants records delivered (`zone-http`, `folder`, `cloudkit`, ...).
public struct StorageProvider: Codable, Hashable, Sendable {
    public var type: String
    public var endpoint: String?
    public var config: [String: JSONValue]?

    public init(type: String, endpoint: String? = nil, config: [String: JSONValue]? = nil) {
        self.type = type
        self.endpoint = endpoint
        self.config = config
    }

    /// What a member gets until it registers something else.
    public static let defaultProvider = StorageProvider(type: "zone-http")
}
