import NIOConcurrencyHelpers

/// A thread-safe memo of values that are expensive to derive but never change for a key
/// (a did:key's public key, a decoded JWT header segment, a storage provider's JSON).
///
/// Bounded so hostile input cannot grow it without limit: when `capacity` entries are held,
/// the next insertion starts over from empty. That is crude but enough for memos whose
/// working set is small (the active callers) and whose misses only cost a recomputation.
final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let entries = NIOLockedValueBox<[Key: Value]>([:])
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// The cached value for `key`, or `make()`'s result, remembered. `make` runs outside the
    /// lock (two callers may both compute a missing value; the results are equal).
    func value(for key: Key, make: () throws -> Value) rethrows -> Value {
        if let hit = entries.withLockedValue({ $0[key] }) { return hit }
        let value = try make()
        entries.withLockedValue { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = value
        }
        return value
    }

    var count: Int { entries.withLockedValue { $0.count } }
}
