#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An advisory, exclusive, inter-process lock on a lock file (`flock(2)`).
///
/// Each acquisition opens the lock file afresh, so the lock also excludes other threads of
/// the same process (flock locks belong to an open file description). The kernel drops the
/// lock when the holder exits or is killed, so a crashed writer never leaves it held.
/// Lock files are empty, never deleted, and never read for content.
public struct FileLock: Sendable {
    public let path: String
    /// How long `withLock` waits before throwing `.lockTimeout`.
    public var timeout: Duration

    public init(path: String, timeout: Duration = .seconds(30)) {
        self.path = path
        self.timeout = timeout
    }

    /// Runs `body` while holding the lock exclusively.
    public func withLock<T>(_ body: () throws -> T) throws -> T {
        let held = try acquire()
        defer { held.release() }
        return try body()
    }

    /// Takes the lock and returns a handle; call `release()` exactly once.
    public func acquire() throws -> Held {
        let attempt = try Attempt(lock: self)
        var pause: UInt32 = 200 // microseconds
        while true {
            if let held = try attempt.take() { return held }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// Takes the lock like ``acquire()``, but waits by suspending the task instead of
    /// blocking its thread (for async code whose threads serve other work meanwhile).
    public func acquireWithoutBlocking() async throws -> Held {
        let attempt = try Attempt(lock: self)
        var pause = Duration.microseconds(200)
        while true {
            if let held = try attempt.take() { return held }
            do {
                try await Task.sleep(for: pause)
            } catch {
                attempt.abandon()
                throw error
            }
            pause = min(pause * 2, .milliseconds(20))
        }
    }

    /// One acquisition: the lock file opened once, tried until taken or out of time.
    private struct Attempt {
        let lock: FileLock
        let fd: Int32
        let deadline: ContinuousClock.Instant

        init(lock: FileLock) throws {
            try POSIX.makeDirectories(POSIX.parentDirectory(of: lock.path))
            self.lock = lock
            fd = try POSIX.open(lock.path, O_RDWR | O_CREAT, mode: 0o644)
            deadline = ContinuousClock.now.advanced(by: lock.timeout)
        }

        /// The lock if it is free now; nil if another holds it; throws past the deadline.
        func take() throws -> Held? {
            while true {
                if flock(fd, LOCK_EX | LOCK_NB) == 0 { return Held(fd: fd) }
                let err = errno
                if err == EINTR { continue }
                guard err == EWOULDBLOCK || err == EAGAIN else {
                    POSIX.close(fd)
                    throw POSIX.ioError("flock", path: lock.path, err: err)
                }
                if ContinuousClock.now >= deadline {
                    POSIX.close(fd)
                    throw FileError(.lockTimeout, "lock still held by another writer after \(lock.timeout)", path: lock.path)
                }
                return nil
            }
        }

        func abandon() { POSIX.close(fd) }
    }

    /// Whether some other open file description holds the lock right now (for diagnostics
    /// and tests; the answer can be stale as soon as it returns).
    public func isHeldElsewhere() throws -> Bool {
        try POSIX.makeDirectories(POSIX.parentDirectory(of: path))
        let fd = try POSIX.open(path, O_RDWR | O_CREAT, mode: 0o644)
        defer { POSIX.close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return true
    }

    /// A held lock. Releasing closes the descriptor, which drops the flock.
    public struct Held: Sendable {
        let fd: Int32
        public func release() {
            flock(fd, LOCK_UN)
            POSIX.close(fd)
        }
    }
}
