import ImprintEncoding
import ImprintTestSupport
import Testing

@Suite struct HexTests {
    @Test func encodesLowercaseAndDecodesEitherCase() {
        #expect(Hex.encode([0x00, 0xDE, 0xAD, 0xBE, 0xEF, 0xFF]) == "00deadbeefff")
        #expect(Hex.decode("00DEADbeefFF") == [0x00, 0xDE, 0xAD, 0xBE, 0xEF, 0xFF])
        #expect(Hex.decode("") == [])
    }

    @Test func rejectsOddLengthAndNonHex() {
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
        #expect(Hex.decode("0g") == nil)
        #expect(Hex.decode("é0") == nil)
    }

    @Test func lowercaseCheckIsExact() {
        #expect(Hex.isLowercaseHex("00ff", length: 4))
        #expect(!Hex.isLowercaseHex("00FF", length: 4))
        #expect(!Hex.isLowercaseHex("00ff", length: 6))
    }

    @Test func roundTripsRandomBytes() {
        let seed = testSeed("HexTests.roundTripsRandomBytes", fallback: 0x4E_C0DE)
        var rng = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(Hex.decode(Hex.encode(bytes)) == bytes, "seed \(seed)")
        }
    }
}
