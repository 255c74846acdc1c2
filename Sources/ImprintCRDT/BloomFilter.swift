/// A Bloom filter over change hashes, as the sync protocol sends it: 10 bits per entry
/// and 7 probes (about 1% false positives), probe positions derived from the hash bytes.
///
/// Encoding: uleb entry count, uleb bits per entry, uleb probe count, then the bit array
/// (`ceil(entries * bitsPerEntry / 8)` bytes, bit `i` is `bits[i >> 3] >> (i & 7) & 1`).
struct BloomFilter: Equatable, Sendable {
    static let defaultBitsPerEntry = 10
    static let defaultProbes = 7
    /// Decoding limits: a filter larger than this is refused as `.tooLarge`.
    static let maxEntries = 1 << 24

    private(set) var entryCount: Int
    let bitsPerEntry: Int
    let probes: Int
    private(set) var bits: [UInt8]

    /// An empty filter sized for `capacity` entries.
    init(capacity: Int, bitsPerEntry: Int = defaultBitsPerEntry, probes: Int = defaultProbes) {
        entryCount = 0
        self.bitsPerEntry = bitsPerEntry
        self.probes = probes
        bits = [UInt8](repeating: 0, count: (capacity * bitsPerEntry + 7) / 8)
    }

    /// A filter holding exactly `hashes`.
    init(_ hashes: some Collection<ChangeHash>) {
        self.init(capacity: hashes.count)
        for h in hashes { insert(h) }
        entryCount = hashes.count
    }

    private var modulo: UInt32 { UInt32(bits.count * 8) }

    /// The bit positions probed for `hash`: double hashing seeded from its first 12 bytes.
    private func positions(_ hash: ChangeHash) -> [Int] {
        let m = modulo
        guard m > 0 else { return [] }
        let b = hash.bytes
        func word(_ i: Int) -> UInt32 {
            UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
        }
        var x = word(0) % m
        var y = word(4) % m
        let z = word(8) % m
        var out = [Int(x)]
        out.reserveCapacity(probes)
        for _ in 1..<max(probes, 1) {
            x = (x &+ y) % m
            y = (y &+ z) % m
            out.append(Int(x))
        }
        return out
    }

    private mutating func insert(_ hash: ChangeHash) {
        for p in positions(hash) { bits[p >> 3] |= 1 << UInt8(p & 7) }
    }

    /// Whether `hash` may be in the set (false positives possible, no false negatives).
    func contains(_ hash: ChangeHash) -> Bool {
        guard entryCount > 0 else { return false }
        for p in positions(hash) where bits[p >> 3] & (1 << UInt8(p & 7)) == 0 { return false }
        return true
    }

    func encode(into w: inout ByteWriter) {
        w.uleb(entryCount)
        w.uleb(bitsPerEntry)
        w.uleb(probes)
        w.raw(bits)
    }

    /// Decodes a filter that must use exactly the bytes of `r`.
    init(decoding r: inout ByteReader) throws {
        let n = try r.count(max: BloomFilter.maxEntries)
        let b = try r.count(max: 64)
        let k = try r.count(max: 64)
        guard n == 0 || (b > 0 && k > 0) else { throw CRDTError(.malformed, "Bloom filter with no bits or probes") }
        let size = (n * b + 7) / 8
        guard size <= r.remaining else { throw CRDTError(.truncated, "Bloom filter needs \(size) bytes") }
        entryCount = n
        bitsPerEntry = b
        probes = k
        bits = Array(try r.bytes(size))
    }
}
