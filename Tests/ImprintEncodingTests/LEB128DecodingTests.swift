import ImprintEncoding
import ImprintTestSupport
import Testing

@Suite struct LEB128DecodingTests {
    @Test func roundTripsRandomValues() throws {
        let seed = testSeed("LEB128DecodingTests.roundTripsRandomValues", fallback: 0x1EB1_28)
        var rng = SplitMix64(seed: seed)
        var out: [UInt8] = []
        var values: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, .max, .max - 1]
        for _ in 0..<2_000 { values.append(rng.next() >> UInt64.random(in: 0...63, using: &rng)) }
        for v in values { LEB128.appendUnsigned(v, to: &out) }
        var offset = 0
        for v in values {
            #expect(try LEB128.readUnsigned(out, at: &offset, end: out.count) == v, "seed \(seed)")
        }
        #expect(offset == out.count)
    }

    @Test func rejectsHostileBytesWithTypedErrors() {
        func read(_ bytes: [UInt8]) -> LEB128Error? {
            var offset = 0
            do { _ = try LEB128.readUnsigned(bytes, at: &offset, end: bytes.count); return nil } catch { return error }
        }
        #expect(read([]) == .truncated)
        #expect(read([0x80, 0x80]) == .truncated)
        #expect(read([0x80, 0x00]) == .nonMinimal)
        #expect(read([UInt8](repeating: 0xFF, count: 9) + [0x02]) == .overflow)
        #expect(read([UInt8](repeating: 0xFF, count: 9) + [0x01]) == nil)
        #expect(read([UInt8](repeating: 0x80, count: 12)) != nil)
    }

    @Test func neverReadsPastEnd() throws {
        let bytes: [UInt8] = [0x05, 0xE5, 0x8E, 0x26]
        var offset = 1
        #expect(throws: LEB128Error.truncated) { try LEB128.readUnsigned(bytes, at: &offset, end: 3) }
        offset = 1
        #expect(try LEB128.readUnsigned(bytes, at: &offset, end: 4) == 624_485)
    }

    @Test func zigzagRoundTrips() {
        for v: Int64 in [0, -1, 1, -64, 64, .min, .max] {
            #expect(LEB128.zigzagDecode(LEB128.zigzagEncode(v)) == v)
        }
    }
}
