import ImprintEncoding

/// The name of an asset: the lowercase hex SHA-256 of its bytes (64 characters).
public struct AssetID: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    public let hex: String

    public init(hex: String) throws {
        guard Hex.isLowercaseHex(hex, length: 64) else {
            throw BundleError(.invalidAssetID, "an asset id is 64 lowercase hex digits, got \"\(hex.prefix(80))\"")
        }
        self.hex = hex
    }

    init(digest: some Sequence<UInt8>) {
        self.hex = Hex.encode(Array(digest))
    }

    public var description: String { hex }

    /// The digest's 32 bytes.
    public var bytes: [UInt8] { Hex.decode(hex) ?? [] }

    public static func < (lhs: AssetID, rhs: AssetID) -> Bool { lhs.hex < rhs.hex }

    public init(from decoder: Decoder) throws {
        try self.init(hex: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(hex)
    }
}
