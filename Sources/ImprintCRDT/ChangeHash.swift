import ImprintEncoding
/// The SHA-256 of a change's canonical encoding; names the change everywhere.
public struct ChangeHash: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    public init?(hex: String) {
        guard let b = Hex.decode(hex) else { return nil }
        self.init(bytes: b)
    }

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }

    public static func < (lhs: ChangeHash, rhs: ChangeHash) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    /// All 32 bytes in one call, as `ActorID` does (the synthesized conformance feeds the
    /// hasher byte by byte, which dominated looking changes up by hash while applying them).
    /// Every byte counts: a hash read from a file (a redacted change's) is chosen by whoever
    /// wrote the file.
    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
