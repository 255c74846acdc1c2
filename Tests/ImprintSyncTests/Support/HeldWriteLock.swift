import Foundation
import GRDB
import Synchronization

/// Holds the write lock of a server's SQLite database from another connection, the way a
/// long transaction of another process would: every write of the server waits (up to its
/// busy timeout) until `release()`. Reads go on (WAL). A real slow store, not a stand-in.
///
/// ```swift
/// let lock = try HeldWriteLock(path: directory + "/delivery.sqlite")
/// // … the server's saves wait …
/// lock.release()
/// ```
final class HeldWriteLock: Sendable {
    private let released = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    /// Returns once the lock is held (`BEGIN IMMEDIATE` succeeded).
    init(path: String) throws {
        let queue = try DatabaseQueue(path: path)
        let held = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        let released = released, done = done
        let holder = Thread {
            do {
                try queue.inTransaction(.immediate) { _ in
                    held.signal()
                    released.wait()
                    return .rollback
                }
            } catch {
                failure.withLock { $0 = error }
                held.signal()
            }
            done.signal()
        }
        holder.start()
        held.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Rolls the transaction back and waits until the lock is gone. Call it once.
    func release() {
        released.signal()
        done.wait()
    }
}
