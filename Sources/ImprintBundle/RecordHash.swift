import ImprintEncoding

/// The 32-byte SHA-256 hash that names one log record (the CRDT engine's change hash; the
/// bundle layer treats it as an opaque key: logs are merged by union on this hash). Named
/// apart from the engine's `ChangeHash`, so code that sees both never mixes them up.
public struct RecordHash: Hashable, Comparable, Sendable, CustomStringConvertible {
    public static let byteCount = 32

    /// Exactly 32 bytes.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws {
        guard bytes.count == Self.byteCount else {
            throw BundleError(.invalidArgument, "a change hash is \(Self.byteCount) bytes, got \(bytes.count)")
        }
        self.bytes = bytes
    }

    public init(hex: String) throws {
        guard let bytes = Hex.decode(hex), bytes.count == Self.byteCount else {
            throw BundleError(.invalidArgument, "a change hash is 64 hex digits, got \"\(hex.prefix(80))\"")
        }
        self.bytes = bytes
    }

    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }

    public static func < (lhs: RecordHash, rhs: RecordHash) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}
