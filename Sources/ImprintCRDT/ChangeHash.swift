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
}
