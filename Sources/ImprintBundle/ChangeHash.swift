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

/// Lowercase hexadecimal, the only spelling used in file names and metadata.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes lowercase or uppercase hex; nil on odd length or a non-hex character.
    static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let hi = value(utf8[i]), let lo = value(utf8[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// True for exactly `length` lowercase hex digits.
    static func isLowercaseHex(_ text: String, length: Int) -> Bool {
        let utf8 = text.utf8
        return utf8.count == length && utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
}
