// Slow, obviously-correct big-integer arithmetic to check the field and scalar code against.

enum Reference {
    /// p = 2^255 - 19, little-endian words.
    static let p: [UInt64] = [0xFFFF_FFFF_FFFF_FFED, .max, .max, 0x7FFF_FFFF_FFFF_FFFF]
    /// L, the group order.
    static let l: [UInt64] = [0x5812_631A_5CF5_D3ED, 0x14DE_F9DE_A2F7_9CD6, 0, 0x1000_0000_0000_0000]

    static func isLess(_ a: [UInt64], _ b: [UInt64]) -> Bool {
        for i in stride(from: a.count - 1, through: 0, by: -1) where a[i] != b[i] { return a[i] < b[i] }
        return false
    }

    static func add(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        var out = [UInt64](repeating: 0, count: max(a.count, b.count) + 1)
        var carry: UInt64 = 0
        for i in 0..<out.count - 1 {
            let (s1, o1) = (i < a.count ? a[i] : 0).addingReportingOverflow(i < b.count ? b[i] : 0)
            let (s2, o2) = s1.addingReportingOverflow(carry)
            out[i] = s2
            carry = (o1 || o2) ? 1 : 0
        }
        out[out.count - 1] = carry
        return out
    }

    static func subtract(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        var out = a
        var borrow: UInt64 = 0
        for i in 0..<a.count {
            let (d1, o1) = a[i].subtractingReportingOverflow(b[i])
            let (d2, o2) = d1.subtractingReportingOverflow(borrow)
            out[i] = d2
            borrow = (o1 || o2) ? 1 : 0
        }
        return out
    }

    /// `value mod m` one bit at a time (m below 2^255; value any number of words).
    static func reduce(_ value: [UInt64], modulo m: [UInt64]) -> [UInt64] {
        var r: [UInt64] = [0, 0, 0, 0]
        for bit in stride(from: value.count * 64 - 1, through: 0, by: -1) {
            let incoming = (value[bit >> 6] >> UInt64(bit & 63)) & 1
            r = [r[0] << 1 | incoming, r[1] << 1 | r[0] >> 63, r[2] << 1 | r[1] >> 63, r[3] << 1 | r[2] >> 63]
            if !isLess(r, m) { r = subtract(r, m) }
        }
        return r
    }

    static func multiply(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        var out = [UInt64](repeating: 0, count: a.count + b.count)
        for i in 0..<a.count {
            var carry: UInt64 = 0
            for j in 0..<b.count {
                let (high, low) = a[i].multipliedFullWidth(by: b[j])
                let (s1, o1) = out[i + j].addingReportingOverflow(low)
                let (s2, o2) = s1.addingReportingOverflow(carry)
                out[i + j] = s2
                carry = high &+ (o1 ? 1 : 0) &+ (o2 ? 1 : 0)
            }
            out[i + b.count] = carry
        }
        return out
    }

    static func multiplyModP(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] { reduce(multiply(a, b), modulo: p) }

    static func bytes(_ words: [UInt64]) -> [UInt8] {
        words.flatMap { w in (0..<8).map { UInt8(truncatingIfNeeded: w >> (8 * UInt64($0))) } }
    }

    static func words(_ bytes: [UInt8]) -> [UInt64] {
        stride(from: 0, to: bytes.count, by: 8).map { start in
            (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[start + $1]) << (8 * UInt64($1)) }
        }
    }

    static func random<G: RandomNumberGenerator>(below m: [UInt64], using rng: inout G) -> [UInt64] {
        reduce((0..<4).map { _ in rng.next() }, modulo: m)
    }
}
