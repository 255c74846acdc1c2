/// A bounded reader of the TLS presentation language as MLS uses it (RFC 9420 §2.1.2:
/// big-endian integers, vectors with minimal variable-length size prefixes). Every read is
/// checked against the end of the enclosing vector; nothing allocates more than the input.
struct WireReader {
    private let bytes: [UInt8]
    private var offset: Int
    private let end: Int

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
        self.end = bytes.count
    }

    private init(_ bytes: [UInt8], offset: Int, end: Int) {
        self.bytes = bytes
        self.offset = offset
        self.end = end
    }

    var isAtEnd: Bool { offset == end }
    var remaining: Int { end - offset }

    mutating func uint8() throws(KeyPackageShapeError) -> UInt8 {
        guard offset < end else { throw KeyPackageShapeError(.truncated, "uint8 at \(offset)") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() throws(KeyPackageShapeError) -> UInt16 {
        UInt16(try uint8()) << 8 | UInt16(try uint8())
    }

    mutating func uint64() throws(KeyPackageShapeError) -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(try uint8()) }
        return value
    }

    /// A variable-length size (1, 2 or 4 bytes, minimal).
    mutating func length() throws(KeyPackageShapeError) -> Int {
        let first = try uint8()
        switch first >> 6 {
        case 0: return Int(first & 0x3f)
        case 1:
            let value = Int(first & 0x3f) << 8 | Int(try uint8())
            guard value >= 64 else { throw KeyPackageShapeError(.invalidLength, "non-minimal length \(value)") }
            return value
        case 2:
            var value = Int(first & 0x3f)
            for _ in 0..<3 { value = value << 8 | Int(try uint8()) }
            guard value >= 16384 else { throw KeyPackageShapeError(.invalidLength, "non-minimal length \(value)") }
            return value
        default:
            throw KeyPackageShapeError(.invalidLength, "reserved length prefix")
        }
    }

    mutating func opaque() throws(KeyPackageShapeError) -> ArraySlice<UInt8> {
        let count = try length()
        guard count <= remaining else { throw KeyPackageShapeError(.truncated, "a \(count)-byte field with \(remaining) left") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// Reads a vector whose items `item` reads until the vector's bytes are used up.
    mutating func vector(_ item: (inout WireReader) throws(KeyPackageShapeError) -> Void) throws(KeyPackageShapeError) {
        let count = try length()
        guard count <= remaining else { throw KeyPackageShapeError(.truncated, "a \(count)-byte vector with \(remaining) left") }
        var inner = WireReader(bytes, offset: offset, end: offset + count)
        while !inner.isAtEnd { try item(&inner) }
        offset += count
    }

    /// `Extension extensions<V>`: each a type and opaque data.
    mutating func extensions() throws(KeyPackageShapeError) {
        try vector { r throws(KeyPackageShapeError) in
            _ = try r.uint16()
            _ = try r.opaque()
        }
    }
}
