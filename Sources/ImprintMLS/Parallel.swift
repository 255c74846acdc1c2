import Dispatch
import Foundation

/// Runs independent pieces of a batch on every core: the signature checks of
/// many KeyPackages or tree leaves, and the HPKE encryptions of a Welcome.
/// Every item is still computed; only the order of computation changes.
enum Parallel {
    /// Below this many items per worker, the batch runs on the calling thread.
    static let minimumItemsPerWorker = 16

    /// `body(i)` for every `i` in `0 ..< count`, in index order. If some items
    /// throw, the error of the lowest such index is rethrown (as a sequential
    /// loop would), after all items have run.
    static func map<T: Sendable>(_ count: Int, _ body: @Sendable (Int) throws -> T) throws -> [T] {
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, count / minimumItemsPerWorker)
        guard workers > 1 else { return try (0 ..< count).map(body) }
        // A few chunks per worker, so a worker slowed by other load does not hold up the batch.
        let chunks = min(count, workers * 4)
        let slots = Slots<T>(count: count)
        defer { slots.free(count: count) }
        DispatchQueue.concurrentPerform(iterations: chunks) { c in
            for i in (count * c / chunks) ..< (count * (c + 1) / chunks) {
                slots.base[i] = Result { try body(i) }
            }
        }
        return try (0 ..< count).map { try slots.base[$0]!.get() }
    }

    /// Result slots written concurrently, each by exactly one chunk.
    private struct Slots<T>: @unchecked Sendable {
        let base: UnsafeMutablePointer<Result<T, any Error>?>
        init(count: Int) {
            base = .allocate(capacity: count)
            base.initialize(repeating: nil, count: count)
        }
        func free(count: Int) {
            base.deinitialize(count: count)
            base.deallocate()
        }
    }
}
