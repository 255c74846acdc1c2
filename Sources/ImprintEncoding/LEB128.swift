/// Unsigned and zig-zag signed LEB128 variable-length integers: the scalar encoding of the
/// engine's binary format (`docs/format.md`) and of the editing traces' patch streams.
///
/// Writers always produce the minimal encoding; `readUnsigned` accepts only that (a
/// redundant trailing zero group is `nonMinimal`), so every value has exactly one spelling.
/// Everything is `@inlinable`: the engine's encoder and decoder call these in their hot loops.
/// `public`, not `package`: with `package` access this compiler (Swift 6.3) did not inline the
/// writers into ImprintCRDT's release build (checked with `objdump -dr` on its objects: calls
/// to `appendUnsigned` remained); with `public` only the specialised, out-of-line slow path
/// of `readUnsigned` is called, as `ByteReader`'s private slow path was before. ImprintEncoding
/// is not a product and is not re-exported, so apps still do not see it.
///
/// ```swift
/// var out: [UInt8] = []
/// LEB128.appendUnsigned(624_485, to: &out)     // [0xE5, 0x8E, 0x26]
/// var offset = 0
/// let v = try LEB128.readUnsigned(out, at: &offset, end: out.count) // 624_485, offset 3
/// ```
public enum LEB128 {
    /// Appends `value` as unsigned LEB128.
    @inlinable @inline(__always)
    public static func appendUnsigned(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// Appends `value` zig-zag encoded, so small negative numbers stay short.
    @inlinable @inline(__always)
    public static func appendSigned(_ value: Int64, to out: inout [UInt8]) {
        appendUnsigned(zigzagEncode(value), to: &out)
    }

    /// Maps 0, -1, 1, -2, … to 0, 1, 2, 3, ….
    @inlinable @inline(__always)
    public static func zigzagEncode(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    /// The inverse of `zigzagEncode`.
    @inlinable @inline(__always)
    public static func zigzagDecode(_ raw: UInt64) -> Int64 {
        Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// Reads one unsigned LEB128 from `bytes[offset..<end]` and advances `offset` past it.
    ///
    /// Never reads at or beyond `end` and never traps: input that ends early is `truncated`,
    /// more than 64 bits is `overflow` or `tooLong`, a redundant zero group is `nonMinimal`.
    /// At most 10 bytes are examined.
    @inlinable
    public static func readUnsigned<Bytes: RandomAccessCollection>(
        _ bytes: Bytes, at offset: inout Int, end: Int
    ) throws(LEB128Error) -> UInt64 where Bytes.Element == UInt8, Bytes.Index == Int {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < end else { throw .truncated }
            let b = bytes[offset]
            offset += 1
            if shift == 63 && b > 1 { throw .overflow }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 {
                if b == 0 && shift > 0 { throw .nonMinimal }
                return result
            }
            shift += 7
            if shift > 63 { throw .tooLong }
        }
    }
}
