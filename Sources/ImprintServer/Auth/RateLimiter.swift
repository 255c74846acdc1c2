import Foundation
import NIOConcurrencyHelpers

/// Per-DID token buckets: `rate` requests per second, bursts of `burst`.
public final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: TimeInterval
    }

    private struct State {
        var buckets: [String: Bucket] = [:]
        var lastSweep: TimeInterval = 0
    }

    public let rate: Double
    public let burst: Double
    private let state = NIOLockedValueBox(State())

    public init(rate: Double = 100, burst: Double = 500) {
        self.rate = rate
        self.burst = burst
    }

    /// Takes one token from `key`'s bucket; false when it is empty.
    public func admit(_ key: String, now: TimeInterval = ProcessInfo.processInfo.systemUptime) -> Bool {
        state.withLockedValue { state in
            if now - state.lastSweep > 60 {
                // Full buckets carry no information: forget them.
                state.buckets = state.buckets.filter { min(burst, $0.value.tokens + (now - $0.value.updated) * rate) < burst }
                state.lastSweep = now
            }
            var bucket = state.buckets[key] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated) * rate)
            bucket.updated = now
            guard bucket.tokens >= 1 else {
                state.buckets[key] = bucket
                return false
            }
            bucket.tokens -= 1
            state.buckets[key] = bucket
            return true
        }
    }
}
