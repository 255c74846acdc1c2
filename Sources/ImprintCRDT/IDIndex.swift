/// Finds the leaf holding an item id, for one actor within one sequence.
///
/// Entries map the first counter of every span to its leaf; a lookup finds the entry
/// with the greatest start not above the counter. Entries live in sorted buckets of
/// bounded size (a two-level B-tree), so inserts cost O(log n + bucket).
struct IDIndex {
    private static let bucketCapacity = 128

    struct Entry {
        var start: Int
        var leaf: SpanLeaf
    }

    private var buckets: [[Entry]] = []
    private var firstKeys: [Int] = []

    init() {}

    /// Builds an index from entries sorted by start.
    init(sorted entries: [Entry]) {
        var i = 0
        while i < entries.count {
            let chunk = Array(entries[i..<min(i + IDIndex.bucketCapacity, entries.count)])
            buckets.append(chunk)
            firstKeys.append(chunk[0].start)
            i += IDIndex.bucketCapacity
        }
    }

    /// Index of the bucket that should hold `key`.
    @inline(__always)
    private func bucketFor(_ key: Int) -> Int {
        var lo = 0
        var hi = firstKeys.count - 1
        if hi < 0 { return -1 }
        if key < firstKeys[0] { return 0 }
        while lo < hi {
            let mid = (lo + hi + 1) >> 1
            if firstKeys[mid] <= key { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// Position of the last entry with start <= key within bucket b, or -1.
    @inline(__always)
    private static func floor(_ entries: [Entry], _ key: Int) -> Int {
        var lo = 0
        var hi = entries.count - 1
        var ans = -1
        while lo <= hi {
            let mid = (lo + hi) >> 1
            if entries[mid].start <= key {
                ans = mid
                lo = mid + 1
            } else {
                hi = mid - 1
            }
        }
        return ans
    }

    func leaf(containing counter: Int) -> SpanLeaf? {
        let b = bucketFor(counter)
        guard b >= 0 else { return nil }
        let i = IDIndex.floor(buckets[b], counter)
        guard i >= 0 else { return nil }
        return buckets[b][i].leaf
    }

    mutating func insert(start: Int, leaf: SpanLeaf) {
        if buckets.isEmpty {
            buckets = [[Entry(start: start, leaf: leaf)]]
            firstKeys = [start]
            return
        }
        // Fast path: appending past the end (local typing always does this).
        let lastB = buckets.count - 1
        if let last = buckets[lastB].last, start > last.start {
            if buckets[lastB].count < IDIndex.bucketCapacity {
                buckets[lastB].append(Entry(start: start, leaf: leaf))
            } else {
                buckets.append([Entry(start: start, leaf: leaf)])
                firstKeys.append(start)
            }
            return
        }
        let b = bucketFor(start)
        let i = IDIndex.floor(buckets[b], start)
        if i >= 0 && buckets[b][i].start == start {
            buckets[b][i].leaf = leaf
            return
        }
        buckets[b].insert(Entry(start: start, leaf: leaf), at: i + 1)
        if i + 1 == 0 { firstKeys[b] = start }
        if buckets[b].count > IDIndex.bucketCapacity * 2 {
            let half = buckets[b].count / 2
            let upper = Array(buckets[b][half...])
            buckets[b].removeSubrange(half...)
            buckets.insert(upper, at: b + 1)
            firstKeys.insert(upper[0].start, at: b + 1)
        }
    }

    /// Points every entry starting in `start ..< end` to `leaf` (spans moved to a new
    /// leaf, including entries of runs that were merged into them).
    mutating func update(start: Int, end: Int, leaf: SpanLeaf) {
        var b = bucketFor(start)
        guard b >= 0 else { return }
        var i = IDIndex.floor(buckets[b], start)
        if i < 0 || buckets[b][i].start < start { i += 1 }
        while b < buckets.count {
            while i < buckets[b].count {
                if buckets[b][i].start >= end { return }
                buckets[b][i].leaf = leaf
                i += 1
            }
            b += 1
            i = 0
        }
    }
}
