import ImprintEncoding
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
        guard let b = Hex.decode(hex) else { return nil }
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

    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }

    /// Hashes the bytes in one call (the synthesized hash feeds them to the hasher one by
    /// one; actors are hashed on every object lookup). Equal actors hash equally.
    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    public static func < (lhs: ActorID, rhs: ActorID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}
