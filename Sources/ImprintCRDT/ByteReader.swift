import ImprintEncoding
/// A bounds-checked cursor over untrusted bytes. Every read either returns a value
/// or throws `CRDTError` (`.truncated` / `.malformed` / `.tooLarge`); none traps.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int
    let end: Int

    init(_ bytes: [UInt8], offset: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.offset = offset
        self.end = end ?? bytes.count
    }

    var isAtEnd: Bool { offset >= end }
    var remaining: Int { end - offset }

    @inline(__always)
    mutating func byte() throws -> UInt8 {
        guard offset < end else { throw CRDTError(.truncated, "unexpected end of data") }
        let b = bytes[offset]
        offset += 1
        return b
    }

    @inline(__always)
    mutating func uleb() throws -> UInt64 {
        // Fast path: most values in the format fit in one byte.
        if offset < end {
            let b = bytes[offset]
            if b < 0x80 {
                offset += 1
                return UInt64(b)
            }
        }
        return try ulebSlow()
    }

    private mutating func ulebSlow() throws -> UInt64 {
        do {
            return try LEB128.readUnsigned(bytes, at: &offset, end: end)
        } catch {
            throw CRDTError(error == .truncated ? .truncated : .malformed, error.description)
        }
    }

    @inline(__always)
    mutating func sleb() throws -> Int64 { LEB128.zigzagDecode(try uleb()) }

    /// An unsigned varint that must fit in `0...limit`.
    @inline(__always)
    mutating func count(max limit: Int) throws -> Int {
        let v = try uleb()
        guard v <= UInt64(limit) else { throw ByteReader.tooLarge(v, limit) }
        return Int(v)
    }

    /// The error of `count` (out of line: `count` is inlined into every decoding loop).
    @inline(never)
    private static func tooLarge(_ v: UInt64, _ limit: Int) -> CRDTError {
        CRDTError(.tooLarge, "count \(v) exceeds limit \(limit)")
    }

    /// A signed varint as Int, for deltas.
    @inline(__always)
    mutating func delta() throws -> Int {
        let v = try sleb()
        return Int(v)
    }

    /// `n` unsigned varints, each in `0...limit`: what `n` calls of `count(max:)` return,
    /// with the same errors, decoded in one tight loop (a whole column of a saved document).
    /// Memory grows only with values actually read, so a hostile `n` cannot reserve more
    /// than the bytes that remain (each value takes at least one byte).
    mutating func counts(_ n: Int, max limit: Int) throws -> [Int] {
        var out: [Int] = []
        out.reserveCapacity(Swift.max(0, Swift.min(n, remaining)))
        try readVarints(n) { v in
            guard v <= UInt64(limit) else { throw ByteReader.tooLarge(v, limit) }
            out.append(Int(v))
        }
        return out
    }

    /// `n` zig-zag signed varints: what `n` calls of `sleb()` return (same errors), in one
    /// tight loop; memory bounded as in `counts(_:max:)`.
    mutating func slebs(_ n: Int) throws -> [Int64] {
        var out: [Int64] = []
        out.reserveCapacity(Swift.max(0, Swift.min(n, remaining)))
        try readVarints(n) { out.append(LEB128.zigzagDecode($0)) }
        return out
    }

    /// Steps over `n` zig-zag signed varints, checking each as `slebs(_:)` would (same
    /// errors), without storing them: for a column that is read again later, in full, by
    /// `slebs(_:)`, which then cannot fail.
    mutating func skipSlebs(_ n: Int) throws {
        try readVarints(n) { _ in }
    }

    /// Reads `n` unsigned varints and hands each to `body` (one-byte values, most of any
    /// column, without leaving the loop; longer ones through the checked slow path).
    @inline(__always)
    private mutating func readVarints(_ n: Int, _ body: (UInt64) throws -> Void) throws {
        let bytes = self.bytes
        let end = self.end
        var o = offset
        defer { offset = o }
        try bytes.withUnsafeBufferPointer { buf in
            for _ in 0..<Swift.max(0, n) {
                if o < end, buf[o] < 0x80 {
                    try body(UInt64(buf[o]))
                    o += 1
                    continue
                }
                let v: UInt64
                do throws(LEB128Error) {
                    v = try LEB128.readUnsigned(buf, at: &o, end: end)
                } catch {
                    throw CRDTError(error == .truncated ? .truncated : .malformed, error.description)
                }
                try body(v)
            }
        }
    }

    mutating func bytes(_ n: Int) throws -> ArraySlice<UInt8> {
        guard n >= 0, n <= remaining else { throw CRDTError(.truncated, "need \(n) bytes, have \(remaining)") }
        let s = bytes[offset..<offset + n]
        offset += n
        return s
    }

    /// A length-prefixed byte string no longer than the remaining input.
    mutating func lengthPrefixed() throws -> ArraySlice<UInt8> {
        let n = try count(max: remaining)
        return try bytes(n)
    }

    mutating func string() throws -> String {
        let s = try lengthPrefixed()
        guard let str = String(validating: s, as: UTF8.self) else {
            throw CRDTError(.malformed, "invalid UTF-8 in string")
        }
        return str
    }

    mutating func uint64LE() throws -> UInt64 {
        let s = try bytes(8)
        var v: UInt64 = 0
        for (i, b) in s.enumerated() { v |= UInt64(b) << (8 * UInt64(i)) }
        return v
    }
}

/// Appends encoded values to a growing byte array.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ b: UInt8) { bytes.append(b) }
    mutating func uleb(_ v: UInt64) { LEB128.appendUnsigned(v, to: &bytes) }
    mutating func uleb(_ v: Int) { LEB128.appendUnsigned(UInt64(v), to: &bytes) }
    mutating func sleb(_ v: Int64) { LEB128.appendSigned(v, to: &bytes) }
    mutating func sleb(_ v: Int) { LEB128.appendSigned(Int64(v), to: &bytes) }
    mutating func raw<S: Sequence>(_ s: S) where S.Element == UInt8 { bytes.append(contentsOf: s) }
    mutating func lengthPrefixed<C: Collection>(_ s: C) where C.Element == UInt8 {
        uleb(s.count)
        bytes.append(contentsOf: s)
    }
    mutating func string(_ s: String) { lengthPrefixed(Array(s.utf8)) }
    mutating func uint64LE(_ v: UInt64) {
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }
}
