/// XXH64 (Yann Collet's xxHash, 64-bit variant, seed 0): the checksum of document frames
/// written since the checksum flag (`docs/format.md`, "Document").
///
/// The frame checksum only has to catch damage (a truncated or bit-flipped copy from a sync
/// tool): anyone can recompute it, so a cryptographic hash buys nothing there, and SHA-256
/// cost most of a load. On this project's 2-core x86 machine (no SHA extensions), SHA-256
/// ran at ~270 MB/s: 0.33 ms of the 0.51 ms it took to open the saved `automerge-paper`
/// document (91 KB) for reading. This XXH64 hashes those 91 KB in ~15 µs.
///
/// Written here rather than linked from libxxhash: the engine depends on no system library
/// but libzstd (`docs/architecture.md`), and the C library's XXH64 (9 µs for the same bytes,
/// measured through its Python binding) or XXH3 (3 µs) would save about 10 µs a load.
/// The test vectors in `XXH64Tests` are the reference implementation's (xxHash 0.8.4).
///
/// Change hashes stay SHA-256: they name changes across replicas, where collisions matter.
enum XXH64 {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The hash of `bytes`, seed 0.
    static func hash(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.withUnsafeBytes { hash($0) }
    }

    static func hash(_ bytes: [UInt8]) -> UInt64 { hash(bytes[...]) }

    /// The checksum as the frame stores it: the hash's 8 bytes, little-endian.
    static func checksum(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        withUnsafeBytes(of: hash(bytes).littleEndian) { Array($0) }
    }

    static func checksum(_ bytes: [UInt8]) -> [UInt8] { checksum(bytes[...]) }

    static func hash(_ input: UnsafeRawBufferPointer) -> UInt64 {
        let count = input.count
        var offset = 0
        var h: UInt64
        if count >= 32 {
            var v1 = prime1 &+ prime2, v2 = prime2, v3: UInt64 = 0, v4 = 0 &- prime1
            let stripes = count - 32
            while offset <= stripes {
                v1 = round(v1, word(input, offset))
                v2 = round(v2, word(input, offset + 8))
                v3 = round(v3, word(input, offset + 16))
                v4 = round(v4, word(input, offset + 24))
                offset += 32
            }
            h = rotate(v1, 1) &+ rotate(v2, 7) &+ rotate(v3, 12) &+ rotate(v4, 18)
            h = merge(h, v1)
            h = merge(h, v2)
            h = merge(h, v3)
            h = merge(h, v4)
        } else {
            h = prime5
        }
        h &+= UInt64(count)
        while offset + 8 <= count {
            h ^= round(0, word(input, offset))
            h = rotate(h, 27) &* prime1 &+ prime4
            offset += 8
        }
        if offset + 4 <= count {
            h ^= UInt64(UInt32(littleEndian: input.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) &* prime1
            h = rotate(h, 23) &* prime2 &+ prime3
            offset += 4
        }
        while offset < count {
            h ^= UInt64(input[offset]) &* prime5
            h = rotate(h, 11) &* prime1
            offset += 1
        }
        h ^= h >> 33
        h &*= prime2
        h ^= h >> 29
        h &*= prime3
        h ^= h >> 32
        return h
    }

    @inline(__always)
    private static func word(_ input: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: input.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 - bits))
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ lane: UInt64) -> UInt64 {
        rotate(accumulator &+ lane &* prime2, 31) &* prime1
    }

    @inline(__always)
    private static func merge(_ accumulator: UInt64, _ lane: UInt64) -> UInt64 {
        (accumulator ^ round(0, lane)) &* prime1 &+ prime4
    }
}
