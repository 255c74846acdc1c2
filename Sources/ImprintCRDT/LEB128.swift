/// Unsigned and zig-zag signed LEB128 variable-length integers, the scalar
/// encoding used throughout the binary format (see `docs/format.md`).
enum LEB128 {
    /// Appends `value` as unsigned LEB128.
    @inline(__always)
    static func appendUnsigned(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// Appends `value` zig-zag encoded, so small negative numbers stay short.
    @inline(__always)
    static func appendSigned(_ value: Int64, to out: inout [UInt8]) {
        appendUnsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63)), to: &out)
    }

    @inline(__always)
    static func zigzagDecode(_ raw: UInt64) -> Int64 {
        Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }
}
