/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by iSCSI, ext4 and
/// LevelDB. Initial value 0xFFFFFFFF, final XOR 0xFFFFFFFF; `checksum("123456789") == 0xE3069283`.
public enum CRC32C {
    static let table: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for i in 0..<256 {
            var crc = UInt32(i)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
            }
            tables[0][i] = crc
        }
        for i in 0..<256 {
            for t in 1..<8 {
                let previous = tables[t - 1][i]
                tables[t][i] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    /// The CRC of `bytes`, continuing from a previous `checksum` result when `seed` is given.
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing seed: UInt32 = 0) -> UInt32 {
        var crc = ~seed
        let t = table
        var index = 0
        let count = bytes.count
        // Slicing-by-8.
        while count - index >= 8 {
            let lo = UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8
                | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24
            let hi = UInt32(bytes[index + 4]) | UInt32(bytes[index + 5]) << 8
                | UInt32(bytes[index + 6]) << 16 | UInt32(bytes[index + 7]) << 24
            let x = lo ^ crc
            crc = t[7][Int(x & 0xFF)] ^ t[6][Int((x >> 8) & 0xFF)]
                ^ t[5][Int((x >> 16) & 0xFF)] ^ t[4][Int(x >> 24)]
                ^ t[3][Int(hi & 0xFF)] ^ t[2][Int((hi >> 8) & 0xFF)]
                ^ t[1][Int((hi >> 16) & 0xFF)] ^ t[0][Int(hi >> 24)]
            index += 8
        }
        while index < count {
            crc = (crc >> 8) ^ t[0][Int((crc ^ UInt32(bytes[index])) & 0xFF)]
            index += 1
        }
        return ~crc
    }

    public static func checksum(_ bytes: [UInt8], continuing seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, continuing: seed) }
    }
}
