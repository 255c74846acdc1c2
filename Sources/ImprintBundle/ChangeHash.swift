import ImprintEncoding

/// The 32-byte SHA-256 hash the CRDT engine uses to identify one encoded change.
/// The bundle layer treats it as an opaque key: logs are merged by union on this hash.
public struct ChangeHash: Hashable, Comparable, Sendable, CustomStringConvertible {
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

    public static func < (lhs: ChangeHash, rhs: ChangeHash) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

/// One encoded change as the engine hands it over: opaque bytes plus the hash naming them.
public struct ChangeRecord: Hashable, Sendable {
    public var hash: ChangeHash
    public var bytes: [UInt8]

    public init(hash: ChangeHash, bytes: [UInt8]) {
        self.hash = hash
        self.bytes = bytes
    }
}
