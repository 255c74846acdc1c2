import Crypto
import Foundation
import ImprintEncoding

/// Where ImprintMLS draws its randomness: the system CSPRNG, always, in every product. Only
/// tests in this package may swap in a deterministic source for the duration of a closure
/// (`MLSEntropy.$source.withValue(...)`), so that a seeded random history, keys and all,
/// replays exactly from its seed. `package` visibility: no app can reach it.
package enum MLSEntropy {
    /// A deterministic source of bytes for tests; nil (the default) means the system CSPRNG.
    @TaskLocal package static var source: DeterministicEntropy?

    /// `count` random bytes.
    static func bytes(_ count: Int) -> [UInt8] {
        if let source { return source.bytes(count) }
        return SymmetricKey(size: .init(bitCount: count * 8)).withUnsafeBytes { Array($0) }
    }
}

/// Bytes from a caller's generator (a seeded one in tests), handed out under a lock.
package final class DeterministicEntropy: @unchecked Sendable {
    private let lock = NSLock()
    private var generator: any RandomNumberGenerator

    package init(_ generator: some RandomNumberGenerator) {
        self.generator = generator
    }

    func bytes(_ count: Int) -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        return generator.nextBytes(count)
    }
}
