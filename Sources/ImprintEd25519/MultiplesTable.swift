/// The multiples `j·256^k·P` (k = 0…31, j = 1…8) of one point P, affine, ready for mixed
/// addition: enough to compute `[e]P` for a 253-bit scalar with 64 additions and 4 doublings
/// (the even/odd radix-16 comb of ref10's fixed-base multiplication).
///
/// Building it costs about as much as two ordinary verifications, so it pays for a key that
/// verifies more than a few signatures. 256 points, 30 KiB.
struct MultiplesTable: Sendable {
    /// Row-major: entry `k·8 + (j-1)` holds `j·256^k·P`.
    let entries: [AffineNielsPoint]

    init(_ point: EdwardsPoint) {
        var projective: [EdwardsPoint] = []
        projective.reserveCapacity(256)
        var base = point
        for k in 0..<32 {
            let cachedBase = base.cached
            var multiple = base
            projective.append(multiple)
            for _ in 1..<8 {
                multiple = multiple.adding(cachedBase)
                projective.append(multiple)
            }
            if k < 31 {
                // 8·base is `multiple`; 256·base is five doublings further.
                base = multiple
                for _ in 0..<5 { base = base.doubled() }
            }
        }
        // Affine coordinates with one inversion (Montgomery's trick).
        var prefix = [FieldElement](repeating: .one, count: projective.count)
        var running = FieldElement.one
        for (index, p) in projective.enumerated() {
            prefix[index] = running
            running = running * p.z
        }
        var inverse = running.inverted()
        var affine = [AffineNielsPoint](repeating: AffineNielsPoint(yPlusX: .one, yMinusX: .one, xy2d: .zero), count: projective.count)
        for index in stride(from: projective.count - 1, through: 0, by: -1) {
            let p = projective[index]
            let zInverse = inverse * prefix[index]
            inverse = inverse * p.z
            let x = p.x * zInverse, y = p.y * zInverse
            affine[index] = AffineNielsPoint(
                yPlusX: (y + x).carried(), yMinusX: (y - x).carried(), xy2d: x * y * EdwardsPoint.d2)
        }
        entries = affine
    }
}
