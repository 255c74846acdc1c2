import Testing
@testable import ImprintBundle
import ImprintTestSupport

@Suite struct CRC32CTests {
    @Test func knownVectors() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
        // RFC 3720 B.4: 32 bytes of zeros, 32 bytes of 0xFF.
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum(Array(0..<32)) == 0x46DD_794E)
    }

    @Test func continuationEqualsWhole() {
        var generator = SplitMix64(seed: testSeed("crc continuation", fallback: 7))
        for _ in 0..<50 {
            let bytes = (0..<Int.random(in: 0..<300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let split = Int.random(in: 0...bytes.count, using: &generator)
            let whole = CRC32C.checksum(bytes)
            let parts = CRC32C.checksum(Array(bytes[split...]), continuing: CRC32C.checksum(Array(bytes[..<split])))
            #expect(whole == parts)
        }
    }
}

extension CRC32CTests {
    /// Bit-at-a-time reference implementation.
    static func reference(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    @Test func slicingBy8MatchesTheBitwiseReferenceAtEveryAlignment() {
        var generator = SplitMix64(seed: testSeed("crc alignment", fallback: 99))
        let bytes = (0..<4099).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for start in 0..<9 {
            for end in [start, start + 1, start + 7, start + 8, start + 9, 4099] where end <= bytes.count {
                let slice = bytes[start..<end]
                let fast = slice.withUnsafeBytes { CRC32C.checksum($0) }
                #expect(fast == Self.reference(slice), "range \(start)..<\(end)")
            }
        }
    }
}
