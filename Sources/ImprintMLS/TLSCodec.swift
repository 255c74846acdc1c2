/// Reader for the TLS presentation language as used by MLS (RFC 9420 §2.1).
///
/// All reads are bounds-checked; lengths read from input are checked against
/// the remaining input before anything is allocated.
public struct TLSReader: Sendable {
    @usableFromInline let bytes: [UInt8]
    /// Current read offset.
    public private(set) var offset: Int
    @usableFromInline let end: Int
    /// Current nesting depth (bounded to stop stack exhaustion on hostile input).
    var depth: Int = 0
    static let maxDepth = 64

    /// A reader over `bytes`, starting at offset 0.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
        self.end = bytes.count
    }

    init(_ bytes: [UInt8], offset: Int, end: Int) {
        self.bytes = bytes
        self.offset = offset
        self.end = end
    }

    /// Bytes left to read.
    public var remaining: Int { end - offset }
    /// True when all input was consumed.
    public var isAtEnd: Bool { offset == end }

    /// Throws unless all input was consumed.
    public func finish() throws {
        guard offset == end else { throw MLSError(.trailingBytes, "\(end - offset) trailing bytes") }
    }

    /// Reads a `uint8`.
    public mutating func readUInt8() throws -> UInt8 {
        guard offset < end else { throw MLSError(.truncated, "uint8") }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads a big-endian `uint16`.
    public mutating func readUInt16() throws -> UInt16 {
        let b = try readBytes(2)
        return UInt16(b[0]) << 8 | UInt16(b[1])
    }

    /// Reads a big-endian `uint32`.
    public mutating func readUInt32() throws -> UInt32 {
        let b = try readBytes(4)
        return b.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Reads a big-endian `uint64`.
    public mutating func readUInt64() throws -> UInt64 {
        let b = try readBytes(8)
        return b.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Reads exactly `count` bytes.
    public mutating func readBytes(_ count: Int) throws -> [UInt8] {
        guard count >= 0, count <= end - offset else { throw MLSError(.truncated, "need \(count) bytes, have \(end - offset)") }
        defer { offset += count }
        return Array(bytes[offset ..< offset + count])
    }

    /// Reads an MLS variable-length integer (RFC 9420 §2.1.2), rejecting
    /// non-minimal encodings and the reserved 8-byte form.
    public mutating func readVarint() throws -> UInt32 {
        let first = try readUInt8()
        let prefix = first >> 6
        switch prefix {
        case 0:
            return UInt32(first)
        case 1:
            let v = UInt32(first & 0x3f) << 8 | UInt32(try readUInt8())
            guard v >= 64 else { throw MLSError(.nonMinimalVarint, "\(v) in 2 bytes") }
            return v
        case 2:
            let rest = try readBytes(3)
            let v = UInt32(first & 0x3f) << 24 | UInt32(rest[0]) << 16 | UInt32(rest[1]) << 8 | UInt32(rest[2])
            guard v >= 16384 else { throw MLSError(.nonMinimalVarint, "\(v) in 4 bytes") }
            return v
        default:
            throw MLSError(.invalidVarint, "reserved varint prefix")
        }
    }

    /// Reads a variable-length opaque vector `opaque data<V>`.
    public mutating func readOpaque() throws -> [UInt8] {
        let len = try readVarint()
        return try readBytes(Int(len))
    }

    /// Reads a vector of items `T items<V>`; `body` is called until the
    /// vector's bytes are consumed exactly.
    public mutating func readVector<T>(_ body: (inout TLSReader) throws -> T) throws -> [T] {
        let len = Int(try readVarint())
        guard len <= end - offset else { throw MLSError(.truncated, "vector of \(len) bytes") }
        guard depth < TLSReader.maxDepth else { throw MLSError(.lengthOverflow, "nesting too deep") }
        var sub = TLSReader(bytes, offset: offset, end: offset + len)
        sub.depth = depth + 1
        var out: [T] = []
        while !sub.isAtEnd {
            out.append(try body(&sub))
        }
        offset += len
        return out
    }

    /// Reads `optional<T>`: a presence byte (0 or 1) then the value.
    public mutating func readOptional<T>(_ body: (inout TLSReader) throws -> T) throws -> T? {
        switch try readUInt8() {
        case 0: return nil
        case 1: return try body(&self)
        case let b: throw MLSError(.invalidValue, "optional presence byte \(b)")
        }
    }

    /// Reads a `uint8` boolean (0 or 1).
    public mutating func readBool() throws -> Bool {
        switch try readUInt8() {
        case 0: return false
        case 1: return true
        case let b: throw MLSError(.invalidValue, "boolean \(b)")
        }
    }
}

/// Writer for the TLS presentation language as used by MLS.
public struct TLSWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty writer.
    public init() {}

    /// An empty writer with room for `capacity` bytes.
    public init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// Writes a `uint8`.
    public mutating func writeUInt8(_ v: UInt8) { bytes.append(v) }
    /// Writes a big-endian `uint16`.
    public mutating func writeUInt16(_ v: UInt16) { bytes.append(UInt8(v >> 8)); bytes.append(UInt8(v & 0xff)) }
    /// Writes a big-endian `uint32`.
    public mutating func writeUInt32(_ v: UInt32) {
        for s in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((v >> UInt32(s)) & 0xff)) }
    }
    /// Writes a big-endian `uint64`.
    public mutating func writeUInt64(_ v: UInt64) {
        for s in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((v >> UInt64(s)) & 0xff)) }
    }
    /// Writes raw bytes (no length prefix).
    public mutating func writeBytes<C: Collection>(_ b: C) where C.Element == UInt8 { bytes.append(contentsOf: b) }
    /// Writes a boolean as a `uint8` 0 or 1.
    public mutating func writeBool(_ v: Bool) { bytes.append(v ? 1 : 0) }

    /// Writes an MLS variable-length integer in its minimal form.
    /// - Precondition: `v < 2^30` (guaranteed for lengths of in-memory values we produce).
    public mutating func writeVarint(_ v: Int) {
        precondition(v >= 0 && v < (1 << 30), "MLS varint out of range")
        if v < 64 {
            bytes.append(UInt8(v))
        } else if v < 16384 {
            bytes.append(UInt8(0x40 | (v >> 8)))
            bytes.append(UInt8(v & 0xff))
        } else {
            bytes.append(UInt8(0x80 | (v >> 24)))
            bytes.append(UInt8((v >> 16) & 0xff))
            bytes.append(UInt8((v >> 8) & 0xff))
            bytes.append(UInt8(v & 0xff))
        }
    }

    /// Writes `opaque data<V>`.
    public mutating func writeOpaque<C: Collection>(_ b: C) where C.Element == UInt8 {
        writeVarint(b.count)
        bytes.append(contentsOf: b)
    }

    /// Writes a vector whose body is produced by `body`.
    public mutating func writeVector(_ body: (inout TLSWriter) -> Void) {
        var inner = TLSWriter()
        body(&inner)
        writeOpaque(inner.bytes)
    }

    /// Writes a vector of items.
    public mutating func writeVector<S: Sequence>(_ items: S, _ each: (inout TLSWriter, S.Element) -> Void) {
        writeVector { w in for i in items { each(&w, i) } }
    }

    /// Writes `optional<T>`.
    public mutating func writeOptional<T>(_ v: T?, _ each: (inout TLSWriter, T) -> Void) {
        if let v { bytes.append(1); each(&self, v) } else { bytes.append(0) }
    }
}

/// A value with an MLS TLS-presentation encoding.
public protocol TLSCodable: Sendable {
    /// Decodes a value from the reader's current position.
    init(from reader: inout TLSReader) throws
    /// Appends the value's encoding.
    func encode(to writer: inout TLSWriter)
}

extension TLSCodable {
    /// The value's TLS encoding.
    public var tlsBytes: [UInt8] {
        var w = TLSWriter()
        encode(to: &w)
        return w.bytes
    }

    /// Decodes a value that must span exactly `bytes`.
    public init(tlsBytes bytes: [UInt8]) throws {
        var r = TLSReader(bytes)
        self = try Self(from: &r)
        try r.finish()
    }
}
