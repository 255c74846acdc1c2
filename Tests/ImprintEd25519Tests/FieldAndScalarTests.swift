import Crypto
import Testing
@testable import ImprintEd25519
import ImprintTestSupport

@Suite struct FieldAndScalarTests {
    func element(_ words: [UInt64]) -> FieldElement {
        Reference.bytes(words).withUnsafeBytes { FieldElement(bytes: $0) }
    }

    func words(_ e: FieldElement) -> [UInt64] {
        let (a, b, c, d) = e.canonicalWords()
        return [a, b, c, d]
    }

    @Test func curveConstants() {
        let d = EdwardsPoint.d
        // d = -121665 / 121666.
        #expect((d * FieldElement(121_666) + FieldElement(121_665)).isZero)
        #expect(EdwardsPoint.d2.isEqual(to: d + d))
        #expect((EdwardsPoint.sqrtMinusOne.squared() + .one).isZero)
    }

    @Test func multiplicationMatchesReference() {
        let seed: UInt64 = 0x5EED_F1E1_D000_0001
        var rng = SplitMix64(seed: seed)
        for _ in 0..<1500 {
            let a = Reference.random(below: Reference.p, using: &rng)
            let b = Reference.random(below: Reference.p, using: &rng)
            let c = Reference.random(below: Reference.p, using: &rng)
            let expected = Reference.multiplyModP(a, b)
            #expect(words(element(a) * element(b)) == expected, "seed \(seed)")
            #expect(words(element(a).squared()) == Reference.multiplyModP(a, a), "seed \(seed)")
            // Loose inputs at the bounds the point formulas produce: (a + b) - c and sums of those.
            let loose = (element(a) + element(b)) - element(c)
            let expectedLoose = Reference.reduce(Reference.add(Reference.add(a, b), Reference.subtract(Reference.p, c)), modulo: Reference.p)
            #expect(words(loose) == expectedLoose, "seed \(seed)")
            #expect(words(loose * element(c)) == Reference.multiplyModP(expectedLoose, c), "seed \(seed)")
            #expect(words((loose + loose) * (loose + loose)) == words(loose.squared() * FieldElement(4)), "seed \(seed)")
            #expect(words((loose + loose).squared()) == words(loose.squared() * FieldElement(4)), "seed \(seed)")
        }
    }

    @Test func inversionAndSquareRoots() {
        var rng = SplitMix64(seed: 77)
        for _ in 0..<200 {
            let a = element(Reference.random(below: Reference.p, using: &rng))
            if a.isZero { continue }
            #expect((a * a.inverted()).isEqual(to: .one))
        }
        #expect(FieldElement.zero.inverted().isZero)
    }

    @Test func canonicalEncoding() {
        // p itself and p + 1 read as 0 and 1; 2^255 - 1 reads as 18.
        let pBytes = Reference.bytes(Reference.p)
        #expect(pBytes.withUnsafeBytes { FieldElement(bytes: $0) }.isZero)
        var pPlusOne = pBytes
        pPlusOne[0] += 1
        #expect(pPlusOne.withUnsafeBytes { FieldElement(bytes: $0) }.isEqual(to: .one))
        let allOnes = [UInt8](repeating: 0xFF, count: 31) + [0x7F]
        #expect(allOnes.withUnsafeBytes { FieldElement(bytes: $0) }.isEqual(to: FieldElement(18)))
        // The top bit is ignored.
        #expect(([UInt8](repeating: 0, count: 31) + [0x80]).withUnsafeBytes { FieldElement(bytes: $0) }.isZero)
    }

    @Test func scalarReductionMatchesReference() {
        let seed: UInt64 = 0xD16E_5700
        var rng = SplitMix64(seed: seed)
        var digests: [[UInt8]] = [
            [UInt8](repeating: 0, count: 64), [UInt8](repeating: 0xFF, count: 64),
            Reference.bytes(Reference.l + [0, 0, 0, 0]),
            Reference.bytes(Reference.subtract(Reference.l, [1, 0, 0, 0]) + [0, 0, 0, 0]),
            Reference.bytes([0, 0, 0, 0] + Reference.l),
        ]
        for _ in 0..<2000 { digests.append((0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) }) }
        for digest in digests {
            let s = digest.withUnsafeBytes { Scalar(reducing: $0) }
            let expected = Reference.reduce(Reference.words(digest), modulo: Reference.l)
            #expect([s.w0, s.w1, s.w2, s.w3] == expected, "seed \(seed), digest \(digest)")
        }
    }

    @Test func canonicalScalars() {
        let l = Reference.bytes(Reference.l)
        #expect(l.withUnsafeBytes { Scalar(canonical: $0) } == nil)
        let lMinusOne = Reference.bytes(Reference.subtract(Reference.l, [1, 0, 0, 0]))
        #expect(lMinusOne.withUnsafeBytes { Scalar(canonical: $0) } != nil)
        let big = [UInt8](repeating: 0, count: 31) + [0x20]
        #expect(big.withUnsafeBytes { Scalar(canonical: $0) } == nil)
    }

    @Test func radix16DigitsReconstructTheScalar() {
        var rng = SplitMix64(seed: 16)
        var scalars = [Scalar(w0: 0, w1: 0, w2: 0, w3: 0),
                       Scalar(w0: Reference.l[0] - 1, w1: Reference.l[1], w2: 0, w3: Reference.l[3])]
        for _ in 0..<500 {
            let w = Reference.random(below: Reference.l, using: &rng)
            scalars.append(Scalar(w0: w[0], w1: w[1], w2: w[2], w3: w[3]))
        }
        for s in scalars {
            let digits = s.radix16Digits()
            #expect(digits.dropLast().allSatisfy { (-8..<8).contains($0) })
            #expect((-8...8).contains(digits[63]))
            // Σ e[i]·16^i, evaluated from the top with signed 128-bit halves avoided: Horner in Int on nibbles.
            var value: [Int] = [Int](repeating: 0, count: 64)
            for (i, d) in digits.enumerated() { value[i] = Int(d) }
            for i in 0..<63 where value[i] < 0 { value[i] += 16; value[i + 1] -= 1 }
            let bytes = (0..<32).map { UInt8(value[2 * $0] | value[2 * $0 + 1] << 4) }
            #expect(Reference.words(bytes) == [s.w0, s.w1, s.w2, s.w3])
        }
    }
}
