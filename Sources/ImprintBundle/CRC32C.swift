/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by iSCSI, ext4 and
/// LevelDB. Initial value 0xFFFFFFFF, final XOR 0xFFFFFFFF; `checksum("123456789") == 0xE3069283`.
public enum CRC32C {
    /// Eight 256-entry tables for slicing-by-8, flattened: table t starts at t * 256.
    static let table: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var crc = UInt32(i)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
            }
            tables[i] = crc
        }
        for t in 1..<8 {
            for i in 0..<256 {
                let previous = tables[(t - 1) * 256 + i]
                tables[t * 256 + i] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    /// The CRC of `bytes`, continuing from a previous `checksum` result when `seed` is given.
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing seed: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return seed }
        return table.withUnsafeBufferPointer { tablePointer -> UInt32 in
            let t = tablePointer.baseAddress!
            var crc = ~seed
            var p = base
            var remaining = bytes.count
            // Slicing-by-8: eight bytes per step.
            while remaining >= 8 {
                let lo = p.loadUnaligned(as: UInt32.self).littleEndian ^ crc
                let hi = p.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
                crc = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                p += 8
                remaining -= 8
            }
            while remaining > 0 {
                crc = (crc >> 8) ^ t[Int((crc ^ UInt32(p.load(as: UInt8.self))) & 0xFF)]
                p += 1
                remaining -= 1
            }
            return ~crc
        }
    }

    public static func checksum(_ bytes: [UInt8], continuing seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, continuing: seed) }
    }
}
