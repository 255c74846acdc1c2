extension RandomNumberGenerator {
    /// The next `count` bytes of the generator: each 64-bit word little-endian, the last one
    /// cut to fit. For seeded generators in tests and benchmarks (and MLS's test-only
    /// deterministic entropy); the system generator's own bytes need no word order.
    ///
    /// ```swift
    /// var rng = SplitMix64(seed: 7)
    /// let payload = rng.nextBytes(1024)   // the same 1,024 bytes for seed 7, every run
    /// ```
    package mutating func nextBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            let word = next()
            for shift in stride(from: 0, to: 64, by: 8) where index < count {
                bytes[index] = UInt8(truncatingIfNeeded: word >> UInt64(shift))
                index += 1
            }
        }
        return bytes
    }
}
