import Foundation

/// The identity of one writer (a device or a process) in a document's history.
///
/// Every op carries the actor that made it. Actors are compared bytewise; that order
/// breaks ties between concurrent ops deterministically on every replica.
public struct ActorID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The raw bytes, 1 to 32 of them (16 for a random actor).
    public let bytes: [UInt8]

    /// Wraps existing bytes. Returns `nil` for an empty value or more than 32 bytes.
    public init?(bytes: [UInt8]) {
        guard !bytes.isEmpty, bytes.count <= 32 else { return nil }
        self.bytes = bytes
    }

    /// Parses lowercase or uppercase hex.
    public init?(hex: String) {
        guard let b = HexCoding.decode(hex) else { return nil }
        self.init(bytes: b)
    }

    /// A fresh random actor (16 bytes from the system's generator).
    public static func random() -> ActorID {
        var g = SystemRandomNumberGenerator()
        let a = g.next()
        let b = g.next()
        return ActorID(unchecked: (0..<16).map { i in UInt8(truncatingIfNeeded: (i < 8 ? a : b) >> (8 * UInt64(i % 8))) })
    }

    /// Derives a stable actor from a name, e.g. a device id: the first 16 bytes of SHA-256(name).
    public static func named(_ name: String) -> ActorID {
        ActorID(unchecked: Array(SHA256Digest.of(Array(name.utf8)).prefix(16)))
    }

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    public var hex: String { HexCoding.encode(bytes) }
    public var description: String { hex }

    public static func < (lhs: ActorID, rhs: ActorID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

enum HexCoding {
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let h = nibble(u[i]), let l = nibble(u[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }
}
