/// An element of GF(2^255 - 19) in radix 2^51: `value = l0 + l1·2^51 + l2·2^102 + l3·2^153 + l4·2^204`.
///
/// Limbs are kept *loosely* reduced. `*` and `squared()` accept limbs below 2^55 and return
/// limbs below 2^51 + 2^20; `+` adds limb-wise without carrying, and `-` adds a multiple of
/// p (4p, whose limbs are just under 2^53) before subtracting, so its right operand must have
/// limbs below 2^53 (any product qualifies). Point formulas respect these bounds by
/// construction; see `EdwardsPoint`.
///
/// Limbs are not unique per value, so there is no `==`: compare with `isEqual(to:)`, which
/// compares canonical forms.
///
/// Everything here runs in variable time: it only ever handles public data (keys, signatures,
/// messages). Do not reuse it for secrets.
struct FieldElement: Sendable {
    var l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64, l4: UInt64

    static let mask51: UInt64 = (1 << 51) - 1
    static let zero = FieldElement(l0: 0, l1: 0, l2: 0, l3: 0, l4: 0)
    static let one = FieldElement(l0: 1, l1: 0, l2: 0, l3: 0, l4: 0)

    /// Reads 32 little-endian bytes, ignoring the top bit (bit 255). The result may be ≥ p
    /// (`isCanonicalEncoding` tells).
    init(bytes b: UnsafeRawBufferPointer) {
        precondition(b.count >= 32)
        let w0 = b.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian
        let w1 = b.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
        let w2 = b.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian
        let w3 = b.loadUnaligned(fromByteOffset: 24, as: UInt64.self).littleEndian
        l0 = w0 & Self.mask51
        l1 = ((w0 >> 51) | (w1 << 13)) & Self.mask51
        l2 = ((w1 >> 38) | (w2 << 26)) & Self.mask51
        l3 = ((w2 >> 25) | (w3 << 39)) & Self.mask51
        l4 = (w3 >> 12) & Self.mask51
    }

    init(l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64, l4: UInt64) {
        self.l0 = l0; self.l1 = l1; self.l2 = l2; self.l3 = l3; self.l4 = l4
    }

    /// A small constant.
    init(_ small: UInt64) {
        precondition(small < 1 << 51)
        self.init(l0: small, l1: 0, l2: 0, l3: 0, l4: 0)
    }

    @inline(__always)
    static func + (a: FieldElement, b: FieldElement) -> FieldElement {
        FieldElement(l0: a.l0 &+ b.l0, l1: a.l1 &+ b.l1, l2: a.l2 &+ b.l2, l3: a.l3 &+ b.l3, l4: a.l4 &+ b.l4)
    }

    /// `a - b + 4p`, limb-wise; `b`'s limbs must be below 2^53 - 76.
    @inline(__always)
    static func - (a: FieldElement, b: FieldElement) -> FieldElement {
        FieldElement(
            l0: (a.l0 &+ 0x1F_FFFF_FFFF_FFB4) &- b.l0,
            l1: (a.l1 &+ 0x1F_FFFF_FFFF_FFFC) &- b.l1,
            l2: (a.l2 &+ 0x1F_FFFF_FFFF_FFFC) &- b.l2,
            l3: (a.l3 &+ 0x1F_FFFF_FFFF_FFFC) &- b.l3,
            l4: (a.l4 &+ 0x1F_FFFF_FFFF_FFFC) &- b.l4)
    }

    static prefix func - (a: FieldElement) -> FieldElement { .zero - a.carried() }

    @inline(__always)
    static func * (a: FieldElement, b: FieldElement) -> FieldElement {
        let b1 = b.l1 &* 19, b2 = b.l2 &* 19, b3 = b.l3 &* 19, b4 = b.l4 &* 19
        let r0 = wide(a.l0, b.l0) &+ wide(a.l1, b4) &+ wide(a.l2, b3) &+ wide(a.l3, b2) &+ wide(a.l4, b1)
        let r1 = wide(a.l0, b.l1) &+ wide(a.l1, b.l0) &+ wide(a.l2, b4) &+ wide(a.l3, b3) &+ wide(a.l4, b2)
        let r2 = wide(a.l0, b.l2) &+ wide(a.l1, b.l1) &+ wide(a.l2, b.l0) &+ wide(a.l3, b4) &+ wide(a.l4, b3)
        let r3 = wide(a.l0, b.l3) &+ wide(a.l1, b.l2) &+ wide(a.l2, b.l1) &+ wide(a.l3, b.l0) &+ wide(a.l4, b4)
        let r4 = wide(a.l0, b.l4) &+ wide(a.l1, b.l3) &+ wide(a.l2, b.l2) &+ wide(a.l3, b.l1) &+ wide(a.l4, b.l0)
        return reduce(r0, r1, r2, r3, r4)
    }

    @inline(__always)
    func squared() -> FieldElement {
        let d0 = l0 &* 2, d1 = l1 &* 2
        let f3 = l3 &* 19, f4 = l4 &* 19
        let r0 = Self.wide(l0, l0) &+ Self.wide(d1, f4) &+ Self.wide(l2 &* 2, f3)
        let r1 = Self.wide(d0, l1) &+ Self.wide(l2 &* 2, f4) &+ Self.wide(l3, f3)
        let r2 = Self.wide(d0, l2) &+ Self.wide(l1, l1) &+ Self.wide(l3 &* 2, f4)
        let r3 = Self.wide(d0, l3) &+ Self.wide(d1, l2) &+ Self.wide(l4, f4)
        let r4 = Self.wide(d0, l4) &+ Self.wide(d1, l3) &+ Self.wide(l2, l2)
        return Self.reduce(r0, r1, r2, r3, r4)
    }

    @inline(__always)
    private static func wide(_ a: UInt64, _ b: UInt64) -> UInt128 {
        UInt128(a) &* UInt128(b)
    }

    /// Carries five 128-bit column sums (each below 2^117) down to limbs below 2^51 + 2^20.
    @inline(__always)
    private static func reduce(_ r0: UInt128, _ r1: UInt128, _ r2: UInt128, _ r3: UInt128, _ r4: UInt128) -> FieldElement {
        let m = UInt128(mask51)
        let c1 = r1 &+ (r0 >> 51)
        let c2 = r2 &+ (c1 >> 51)
        let c3 = r3 &+ (c2 >> 51)
        let c4 = r4 &+ (c3 >> 51)
        let c0 = (r0 & m) &+ (c4 >> 51) &* 19
        return FieldElement(
            l0: UInt64(truncatingIfNeeded: c0) & mask51,
            l1: UInt64(truncatingIfNeeded: c1 & m) &+ UInt64(truncatingIfNeeded: c0 >> 51),
            l2: UInt64(truncatingIfNeeded: c2 & m),
            l3: UInt64(truncatingIfNeeded: c3 & m),
            l4: UInt64(truncatingIfNeeded: c4 & m))
    }

    /// The same value with every limb below 2^51 + 2^13 (a cheap carry pass; limbs below 2^63 in).
    @inline(__always)
    func carried() -> FieldElement {
        var r = self
        r.l1 &+= r.l0 >> 51; r.l0 &= Self.mask51
        r.l2 &+= r.l1 >> 51; r.l1 &= Self.mask51
        r.l3 &+= r.l2 >> 51; r.l2 &= Self.mask51
        r.l4 &+= r.l3 >> 51; r.l3 &= Self.mask51
        r.l0 &+= (r.l4 >> 51) &* 19; r.l4 &= Self.mask51
        return r
    }

    /// Squares `count` times.
    func squared(times count: Int) -> FieldElement {
        var r = self
        for _ in 0..<count { r = r.squared() }
        return r
    }

    /// `self^(2^250 - 1)` and `self^11`, the shared start of inversion and square root.
    private func pow2250MinusOne() -> (FieldElement, FieldElement) {
        let z2 = squared()                          // 2
        let z9 = z2.squared(times: 2) * self        // 9
        let z11 = z9 * z2                           // 11
        let z2_5_0 = z11.squared() * z9             // 2^5 - 1
        let z2_10_0 = z2_5_0.squared(times: 5) * z2_5_0
        let z2_20_0 = z2_10_0.squared(times: 10) * z2_10_0
        let z2_40_0 = z2_20_0.squared(times: 20) * z2_20_0
        let z2_50_0 = z2_40_0.squared(times: 10) * z2_10_0
        let z2_100_0 = z2_50_0.squared(times: 50) * z2_50_0
        let z2_200_0 = z2_100_0.squared(times: 100) * z2_100_0
        let z2_250_0 = z2_200_0.squared(times: 50) * z2_50_0
        return (z2_250_0, z11)
    }

    /// `self^(p - 2)`: the inverse, or zero for zero.
    func inverted() -> FieldElement {
        let (z2_250_0, z11) = pow2250MinusOne()
        return z2_250_0.squared(times: 5) * z11     // 2^255 - 21
    }

    /// `self^((p - 5) / 8) = self^(2^252 - 3)`, used for square roots.
    func powP58() -> FieldElement {
        let (z2_250_0, _) = pow2250MinusOne()
        return z2_250_0.squared(times: 2) * self
    }

    /// The canonical value (0 ≤ v < p) as four 64-bit words, least significant first.
    func canonicalWords() -> (UInt64, UInt64, UInt64, UInt64) {
        var r = carried().carried()
        // Now r < 2^255 + small; subtract p if r ≥ p: q = 1 iff r + 19 ≥ 2^255.
        var q = (r.l0 &+ 19) >> 51
        q = (r.l1 &+ q) >> 51
        q = (r.l2 &+ q) >> 51
        q = (r.l3 &+ q) >> 51
        q = (r.l4 &+ q) >> 51
        r.l0 &+= 19 &* q
        r.l1 &+= r.l0 >> 51; r.l0 &= Self.mask51
        r.l2 &+= r.l1 >> 51; r.l1 &= Self.mask51
        r.l3 &+= r.l2 >> 51; r.l2 &= Self.mask51
        r.l4 &+= r.l3 >> 51; r.l3 &= Self.mask51
        r.l4 &= Self.mask51
        return (r.l0 | (r.l1 << 51),
                (r.l1 >> 13) | (r.l2 << 38),
                (r.l2 >> 26) | (r.l3 << 25),
                (r.l3 >> 39) | (r.l4 << 12))
    }

    /// The canonical 32-byte little-endian encoding (bit 255 clear).
    func encoded() -> [UInt8] {
        let (w0, w1, w2, w3) = canonicalWords()
        var out = [UInt8](repeating: 0, count: 32)
        out.withUnsafeMutableBytes { p in
            p.storeBytes(of: w0.littleEndian, toByteOffset: 0, as: UInt64.self)
            p.storeBytes(of: w1.littleEndian, toByteOffset: 8, as: UInt64.self)
            p.storeBytes(of: w2.littleEndian, toByteOffset: 16, as: UInt64.self)
            p.storeBytes(of: w3.littleEndian, toByteOffset: 24, as: UInt64.self)
        }
        return out
    }

    var isZero: Bool {
        let (w0, w1, w2, w3) = canonicalWords()
        return (w0 | w1 | w2 | w3) == 0
    }

    /// Whether the canonical value is odd ("negative" in RFC 8032's encoding).
    var isNegative: Bool { canonicalWords().0 & 1 == 1 }

    func isEqual(to other: FieldElement) -> Bool {
        let a = canonicalWords(), b = other.canonicalWords()
        return a.0 == b.0 && a.1 == b.1 && a.2 == b.2 && a.3 == b.3
    }
}
