/// scrypt cost parameters for deriving the key that unlocks a store from a passphrase.
///
/// Stored in the store (with the salt) when it is created, so a store always opens with the
/// parameters it was made with; changing the default later does not lock old stores out.
public struct ScryptParameters: Hashable, Sendable {
    /// CPU/memory cost N (a power of two).
    public var rounds: Int
    /// Block size r.
    public var blockSize: Int
    /// Parallelism p.
    public var parallelism: Int

    public init(rounds: Int, blockSize: Int, parallelism: Int) {
        self.rounds = rounds
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    /// OWASP's recommendation (Password Storage Cheat Sheet): N = 2^17, r = 8, p = 1,
    /// 128 MiB of memory and a fraction of a second per unlock.
    public static let owasp = ScryptParameters(rounds: 1 << 17, blockSize: 8, parallelism: 1)

    /// Cheap parameters for tests only (N = 2^10): unlocks in about a millisecond.
    public static let testing = ScryptParameters(rounds: 1 << 10, blockSize: 8, parallelism: 1)

    /// Whether these are sane: N a power of two in 2^10…2^22, r in 1…32, p in 1…16.
    /// Hostile values stored in a file are refused before any memory is allocated.
    var isAcceptable: Bool {
        rounds >= 1 << 10 && rounds <= 1 << 22 && rounds & (rounds - 1) == 0
            && (1...32).contains(blockSize) && (1...16).contains(parallelism)
    }
}
