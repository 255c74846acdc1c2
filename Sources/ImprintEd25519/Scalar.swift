/// Integers modulo the group order L = 2^252 + 27742317777372353535851937790883648493, as
/// four little-endian 64-bit words, and their signed radix-16 digits for multiplication.
struct Scalar: Sendable, Equatable {
    var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    static let order = Scalar(w0: 0x5812_631A_5CF5_D3ED, w1: 0x14DE_F9DE_A2F7_9CD6, w2: 0, w3: 0x1000_0000_0000_0000)

    init(w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64) {
        self.w0 = w0; self.w1 = w1; self.w2 = w2; self.w3 = w3
    }

    /// Reads 32 little-endian bytes as they are; nil unless the value is below L
    /// (RFC 8032 §5.1.7 requires `0 ≤ S < L` of a signature's S).
    init?(canonical bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count >= 32)
        let s = Scalar(
            w0: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian,
            w1: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian,
            w2: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian,
            w3: bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self).littleEndian)
        guard s.isBelowOrder else { return nil }
        self = s
    }

    var isBelowOrder: Bool {
        let l = Self.order
        if w3 != l.w3 { return w3 < l.w3 }
        if w2 != l.w2 { return w2 < l.w2 }
        if w1 != l.w1 { return w1 < l.w1 }
        return w0 < l.w0
    }

    /// Reduces a 512-bit little-endian integer (a SHA-512 digest) modulo L.
    ///
    /// Takes 32 bits at a time from the top: `r ← r·2^32 + chunk` (below 2^285), then
    /// subtracts `q·L` with `q = r >> 252`. Because L exceeds 2^252 by less than 2^125, that
    /// `q` is the true quotient or one more, so at most one `+ L` corrects the result.
    init(reducing digest: UnsafeRawBufferPointer) {
        precondition(digest.count >= 64)
        let l = Self.order
        var r0: UInt64 = 0, r1: UInt64 = 0, r2: UInt64 = 0, r3: UInt64 = 0
        for index in stride(from: 15, through: 0, by: -1) {
            let chunk = UInt64(digest.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self).littleEndian)
            // Shift left by 32 and bring in the chunk; r < L < 2^253 so r4 < 2^29.
            let r4 = r3 >> 32
            r3 = (r3 << 32) | (r2 >> 32)
            r2 = (r2 << 32) | (r1 >> 32)
            r1 = (r1 << 32) | (r0 >> 32)
            r0 = (r0 << 32) | chunk
            let q = (r4 << 4) | (r3 >> 60)
            // q·L as five words.
            let p0 = q.multipliedFullWidth(by: l.w0)
            let p1 = q.multipliedFullWidth(by: l.w1)
            let (t1, c1) = p1.low.addingReportingOverflow(p0.high)
            let t0 = p0.low
            let t2 = p1.high &+ (c1 ? 1 : 0)
            let t3 = q << 60
            let t4 = q >> 4
            // r - q·L, with borrow.
            var borrow: UInt64
            (r0, borrow) = Self.subtract(r0, t0, 0)
            (r1, borrow) = Self.subtract(r1, t1, borrow)
            (r2, borrow) = Self.subtract(r2, t2, borrow)
            (r3, borrow) = Self.subtract(r3, t3, borrow)
            let (_, negative) = Self.subtract(r4, t4, borrow)
            if negative != 0 {
                var carry: UInt64
                (r0, carry) = Self.add(r0, l.w0, 0)
                (r1, carry) = Self.add(r1, l.w1, carry)
                (r2, carry) = Self.add(r2, l.w2, carry)
                (r3, _) = Self.add(r3, l.w3, carry)
            }
        }
        self.init(w0: r0, w1: r1, w2: r2, w3: r3)
    }

    @inline(__always)
    private static func subtract(_ a: UInt64, _ b: UInt64, _ borrow: UInt64) -> (UInt64, UInt64) {
        let (d1, o1) = a.subtractingReportingOverflow(b)
        let (d2, o2) = d1.subtractingReportingOverflow(borrow)
        return (d2, (o1 || o2) ? 1 : 0)
    }

    @inline(__always)
    private static func add(_ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
        let (s1, o1) = a.addingReportingOverflow(b)
        let (s2, o2) = s1.addingReportingOverflow(carry)
        return (s2, (o1 || o2) ? 1 : 0)
    }

    /// 64 signed digits `e[i]` in [-8, 8) (the last in [-8, 8]) with `Σ e[i]·16^i = self`.
    func radix16Digits() -> [Int8] {
        var digits = [Int8](repeating: 0, count: 64)
        let words = [w0, w1, w2, w3]
        for i in 0..<64 {
            digits[i] = Int8(truncatingIfNeeded: (words[i >> 4] >> (UInt64(i & 15) * 4)) & 15)
        }
        var carry: Int8 = 0
        for i in 0..<63 {
            digits[i] += carry
            carry = (digits[i] + 8) >> 4
            digits[i] -= carry << 4
        }
        digits[63] += carry
        return digits
    }
}
