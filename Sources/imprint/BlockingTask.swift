import Foundation

/// Runs async work from a synchronous command's `run()`: the calling thread waits while the
/// work runs on the concurrency runtime's threads. The CLI's commands are synchronous (one
/// `main` with the exit-status contract); the sharing commands talk to servers.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = BlockingOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { outcome.set(.success(try await body())) } catch { outcome.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return try outcome.get()
}

/// The result handed from the task to the waiting thread (written once, read after the signal).
private final class BlockingOutcome<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) {
        lock.withLock { result = value }
    }

    func get() throws -> T {
        try lock.withLock { result! }.get()
    }
}
