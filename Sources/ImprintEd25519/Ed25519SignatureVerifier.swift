import Crypto
import Foundation

/// Verifies Ed25519 signatures (RFC 8032), preparing a fast `Ed25519VerifyingKey` for each
/// public key that keeps coming back.
///
/// Signers in a group or clients of a service sign many messages with one key. The first
/// `precomputeAfter - 1` signatures of a key are verified by swift-crypto; from then on the
/// key's multiples table is built once and reused, until more than `capacity` prepared keys
/// push out the least recently used. The answer is the same either way: both paths accept
/// exactly the same signatures (keys that `Ed25519VerifyingKey` declines always take the
/// swift-crypto path).
///
/// Thread-safe; the lock is held only for a dictionary lookup.
public final class Ed25519SignatureVerifier: @unchecked Sendable {
    /// A process-wide verifier (256 prepared keys at most, ~8 MiB).
    public static let shared = Ed25519SignatureVerifier()

    private enum Entry {
        case seen(count: Int)
        case prepared(Ed25519VerifyingKey, lastUse: UInt64)
        case declined
    }

    private struct KeyBytes: Hashable {
        var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64
    }

    private let lock = NSLock()
    private var entries: [KeyBytes: Entry] = [:]
    private var preparedCount = 0
    private var unpreparedCount = 0
    private var clock: UInt64 = 0

    /// The most prepared keys kept.
    public let capacity: Int
    /// The use of a key at which it is prepared (2: on its second signature).
    public let precomputeAfter: Int

    public init(capacity: Int = 256, precomputeAfter: Int = 2) {
        precondition(capacity >= 1 && precomputeAfter >= 1)
        self.capacity = capacity
        self.precomputeAfter = precomputeAfter
    }

    /// Whether `signature` is a valid Ed25519 signature of `message` by `publicKey` (32 bytes).
    public func isValidSignature<S: DataProtocol, M: DataProtocol, K: DataProtocol>(
        _ signature: S, for message: M, publicKey: K
    ) -> Bool {
        guard publicKey.count == 32, signature.count == 64 else { return false }
        let keyBytes = [UInt8](publicKey)
        let id = keyBytes.withUnsafeBytes {
            KeyBytes(w0: $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                     w1: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                     w2: $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
                     w3: $0.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        }
        switch lookUp(id) {
        case .prepared(let key):
            return key.isValidSignature(signature, for: message)
        case .prepare:
            guard let key = Ed25519VerifyingKey(rawRepresentation: keyBytes) else {
                store(id, .declined)
                return Self.fallback(signature, message, keyBytes)
            }
            store(id, .prepared(key, lastUse: 0))
            return key.isValidSignature(signature, for: message)
        case .fallback:
            return Self.fallback(signature, message, keyBytes)
        }
    }

    private enum Decision {
        case prepared(Ed25519VerifyingKey)
        case prepare
        case fallback
    }

    private func lookUp(_ id: KeyBytes) -> Decision {
        lock.lock()
        defer { lock.unlock() }
        clock &+= 1
        switch entries[id] {
        case .prepared(let key, _)?:
            entries[id] = .prepared(key, lastUse: clock)
            return .prepared(key)
        case .declined?:
            return .fallback
        case .seen(let count)?:
            if count + 1 >= precomputeAfter { return .prepare }
            entries[id] = .seen(count: count + 1)
            return .fallback
        case nil:
            if precomputeAfter <= 1 { return .prepare }
            if unpreparedCount >= capacity * 4 { dropUnprepared() }
            entries[id] = .seen(count: 1)
            unpreparedCount += 1
            return .fallback
        }
    }

    private func store(_ id: KeyBytes, _ entry: Entry) {
        lock.lock()
        defer { lock.unlock() }
        clock &+= 1
        let previous = entries[id]
        switch previous {
        case .prepared?: return  // another thread prepared it meanwhile
        case .seen?, .declined?: unpreparedCount -= 1
        case nil: break
        }
        switch entry {
        case .prepared(let key, _):
            if preparedCount >= capacity { evictLeastRecentlyUsed() }
            entries[id] = .prepared(key, lastUse: clock)
            preparedCount += 1
        case .declined, .seen:
            entries[id] = entry
            unpreparedCount += 1
        }
    }

    /// Forgets keys seen too few times to be prepared (and declined ones), keeping prepared keys.
    private func dropUnprepared() {
        entries = entries.filter { if case .prepared = $0.value { return true } else { return false } }
        unpreparedCount = 0
    }

    private func evictLeastRecentlyUsed() {
        var oldest: (KeyBytes, UInt64)?
        for (id, entry) in entries {
            if case .prepared(_, let lastUse) = entry, lastUse < (oldest?.1 ?? .max) { oldest = (id, lastUse) }
        }
        if let (id, _) = oldest {
            entries[id] = nil
            preparedCount -= 1
        }
    }

    /// The number of prepared keys held (for tests and statistics).
    public var preparedKeyCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return preparedCount
    }

    private static func fallback<S: DataProtocol, M: DataProtocol>(_ signature: S, _ message: M, _ key: [UInt8]) -> Bool {
        guard let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: key) else { return false }
        return publicKey.isValidSignature(signature, for: message)
    }
}
