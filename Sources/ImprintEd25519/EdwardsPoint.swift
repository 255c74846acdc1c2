/// A point of edwards25519 (`-x² + y² = 1 + d·x²·y²`) in extended coordinates
/// `(X : Y : Z : T)` with `x = X/Z`, `y = Y/Z`, `x·y = T/Z` (Hisil–Wong–Carter–Dawson 2008).
///
/// The addition formulas used are complete on this curve (a = -1 is a square, d is not), so
/// they need no special cases for the identity, doubling or inverses. Variable time: public
/// data only.
struct EdwardsPoint: Sendable {
    var x: FieldElement
    var y: FieldElement
    var z: FieldElement
    var t: FieldElement

    static let identity = EdwardsPoint(x: .zero, y: .one, z: .one, t: .zero)

    /// d = -121665/121666.
    static let d = FieldElement(
        l0: 929_955_233_495_203, l1: 466_365_720_129_213, l2: 1_662_059_464_998_953,
        l3: 2_033_849_074_728_123, l4: 1_442_794_654_840_575)
    /// 2·d.
    static let d2 = FieldElement(
        l0: 1_859_910_466_990_425, l1: 932_731_440_258_426, l2: 1_072_319_116_312_658,
        l3: 1_815_898_335_770_999, l4: 633_789_495_995_903)
    /// √-1 = 2^((p-1)/4).
    static let sqrtMinusOne = FieldElement(
        l0: 1_718_705_420_411_056, l1: 234_908_883_556_509, l2: 2_233_514_472_574_048,
        l3: 2_117_202_627_021_982, l4: 765_476_049_583_133)

    /// Decodes a 32-byte point encoding (RFC 8032 §5.1.3). Returns nil when `y` is not
    /// canonical (≥ p), when no `x` exists, or when `x` is zero: callers that must agree with
    /// another implementation on those rare encodings hand them to it instead.
    init?(strictlyDecoding bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 32 else { return nil }
        let y = FieldElement(bytes: bytes)
        let (w0, w1, w2, w3) = y.canonicalWords()
        let raw0 = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian
        let raw1 = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
        let raw2 = bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian
        let raw3 = bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self).littleEndian & ~(1 << 63)
        guard w0 == raw0, w1 == raw1, w2 == raw2, w3 == raw3 else { return nil }
        let signBit = bytes[31] >> 7

        // x² = u / v with u = y² - 1, v = d·y² + 1.
        let yy = y.squared()
        let u = yy - .one
        let v = yy * Self.d + .one
        let v3 = v.squared() * v
        let v7 = v3.squared() * v
        // Candidate root x = u·v³·(u·v⁷)^((p-5)/8).
        var x = u * v3 * (u * v7).powP58()
        let check = v * x.squared()
        if check.isEqual(to: u) {
            // x is a root.
        } else if check.isEqual(to: -u) {
            x = x * Self.sqrtMinusOne
        } else {
            return nil
        }
        if x.isZero { return nil }
        if x.isNegative != (signBit == 1) { x = -x }
        x = x.carried()
        self.init(x: x, y: y, z: .one, t: x * y)
    }

    init(x: FieldElement, y: FieldElement, z: FieldElement, t: FieldElement) {
        self.x = x; self.y = y; self.z = z; self.t = t
    }

    /// The last step shared by doubling and every addition: `(E·F, G·H, F·G, E·H)`.
    @inline(__always)
    init(e: FieldElement, f: FieldElement, g: FieldElement, h: FieldElement) {
        self.init(x: e * f, y: g * h, z: f * g, t: e * h)
    }

    /// The canonical encoding: y with the parity of x in bit 255.
    func encoded() -> [UInt8] {
        let zInverse = z.inverted()
        let ax = x * zInverse, ay = y * zInverse
        var out = ay.encoded()
        if ax.isNegative { out[31] |= 0x80 }
        return out
    }

    /// 2·self (dbl-2008-hwcd with a = -1): 4M + 4S.
    @inline(__always)
    func doubled() -> EdwardsPoint {
        let a = x.squared()
        let b = y.squared()
        let c = z.squared() + z.squared()
        let h = a + b                    // -(a·X² + Y²) negated: H = A + B
        let e = h - (x + y).squared()    // -(2XY)
        let g = a - b                    // aA + B negated: G = A - B
        let f = c + g                    // ...so F = C + G = -(G' - C)
        // With G' = B - A, F' = G' - C, H' = -A - B, E' = 2XY: (E', F', G', H') = (-E, -F, -G, -H),
        // and every output below is a product of two of them, so the signs cancel.
        return EdwardsPoint(e: e, f: f, g: g, h: h)
    }

    /// self + q, with q in cached form (add-2008-hwcd-3, k = 2d): 8M.
    @inline(__always)
    func adding(_ q: CachedPoint) -> EdwardsPoint {
        let a = (y - x) * q.yMinusX
        let b = (y + x) * q.yPlusX
        let c = t * q.t2d
        let zz = z * q.z
        let d = zz + zz
        return EdwardsPoint(e: b - a, f: d - c, g: d + c, h: b + a)
    }

    /// self + q, with q affine in Niels form (madd-2008-hwcd-3): 7M.
    @inline(__always)
    func adding(_ q: AffineNielsPoint) -> EdwardsPoint {
        let a = (y - x) * q.yMinusX
        let b = (y + x) * q.yPlusX
        let c = t * q.xy2d
        let d = z + z
        return EdwardsPoint(e: b - a, f: d - c, g: d + c, h: b + a)
    }

    /// self - q, with q affine in Niels form (-q swaps y+x and y-x and negates 2dxy).
    @inline(__always)
    func subtracting(_ q: AffineNielsPoint) -> EdwardsPoint {
        let a = (y - x) * q.yPlusX
        let b = (y + x) * q.yMinusX
        let c = t * q.xy2d
        let d = z + z
        return EdwardsPoint(e: b - a, f: d + c, g: d - c, h: b + a)
    }

    var cached: CachedPoint {
        CachedPoint(yPlusX: (y + x).carried(), yMinusX: (y - x).carried(), z: z, t2d: t * Self.d2)
    }
}

/// A point prepared for repeated addition: `(Y+X, Y-X, Z, 2d·T)`.
struct CachedPoint: Sendable {
    var yPlusX: FieldElement
    var yMinusX: FieldElement
    var z: FieldElement
    var t2d: FieldElement
}

/// An affine point prepared for mixed addition: `(y+x, y-x, 2d·x·y)`, limbs carried.
struct AffineNielsPoint: Sendable {
    var yPlusX: FieldElement
    var yMinusX: FieldElement
    var xy2d: FieldElement
}
