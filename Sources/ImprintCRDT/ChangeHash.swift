import ImprintEncoding
/// The SHA-256 of a change's canonical encoding; names the change everywhere.
///
/// The 32 bytes are kept inline, as four big-endian words: a hash costs no allocation, and
/// comparing or hashing one reads no other memory. (Applying a change probes tables of tens
/// of thousands of hashes; with the bytes in an array of their own, every probe followed a
/// pointer.) Ordering is by the bytes, lexicographically, as before.
public struct ChangeHash: Hashable, Comparable, Sendable, CustomStringConvertible {
    private let w0: UInt64
    private let w1: UInt64
    private let w2: UInt64
    private let w3: UInt64

    /// The 32 bytes.
    public var bytes: [UInt8] {
        withUnsafeBytes(of: (w0.bigEndian, w1.bigEndian, w2.bigEndian, w3.bigEndian)) { Array($0) }
    }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.init(unchecked: bytes)
    }

    public init?(hex: String) {
        guard let b = Hex.decode(hex) else { return nil }
        self.init(bytes: b)
    }

    /// `bytes` must be 32 bytes (a digest, or 32 bytes read as one).
    init(unchecked bytes: [UInt8]) {
        precondition(bytes.count == 32, "a change hash is 32 bytes")
        (w0, w1, w2, w3) = bytes.withUnsafeBytes { b in
            (UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
             UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
             UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
             UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
        }
    }

    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }

    /// Lexicographic by the bytes (big-endian words compare as their bytes do).
    public static func < (lhs: ChangeHash, rhs: ChangeHash) -> Bool {
        (lhs.w0, lhs.w1, lhs.w2, lhs.w3) < (rhs.w0, rhs.w1, rhs.w2, rhs.w3)
    }

    // Hashable: synthesized over the four words, so every byte counts (a hash read from a
    // file, a redacted change's, is chosen by whoever wrote the file).
}
