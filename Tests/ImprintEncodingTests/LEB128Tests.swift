import Testing
import ImprintEncoding

@Suite struct LEB128Tests {
    @Test func unsignedEncodingMatchesKnownBytes() {
        var out: [UInt8] = []
        LEB128.appendUnsigned(624_485, to: &out)
        #expect(out == [0xE5, 0x8E, 0x26])
    }

    @Test func zigzagKeepsSmallNegativesShort() {
        var out: [UInt8] = []
        LEB128.appendSigned(-1, to: &out)
        #expect(out == [0x01])
        #expect(LEB128.zigzagDecode(1) == -1)
        #expect(LEB128.zigzagDecode(UInt64(bitPattern: (Int64.min << 1) ^ (Int64.min >> 63))) == Int64.min)
    }
}
