#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a `DirectoryWatcher` learns of changes.
public enum DirectoryWatchMechanism: String, Sendable {
    case inotify
    case polling
}

/// Waits until a caller-defined fingerprint of some directories changes (`imprint watch`
/// on bundles; zone folders).
///
/// On Linux it sleeps on inotify (the directories `directories()` names, re-read before
/// every wait so directories created since are watched too) and re-takes the fingerprint when
/// woken; it also re-checks every `pollInterval`, which is the whole mechanism elsewhere or
/// when inotify is unavailable (`forcePolling`). A change is reported only when the
/// fingerprint differs, so writes the fingerprint leaves out (a device's own files, lock
/// files) never wake the caller.
///
/// ```swift
/// let watcher = DirectoryWatcher(directories: { [root] }, fingerprint: { try snapshot(of: root) })
/// var seen = try watcher.fingerprint()
/// while let next = try watcher.waitForChange(since: seen, timeout: .seconds(60)) { seen = next; reload() }
/// ```
public final class DirectoryWatcher<Fingerprint: Equatable & Sendable>: @unchecked Sendable {
    public typealias Mechanism = DirectoryWatchMechanism

    public let pollInterval: Duration
    public private(set) var mechanism: Mechanism
    private let directories: @Sendable () -> [String]
    private let takeFingerprint: @Sendable () throws -> Fingerprint
    private var inotifyFD: Int32 = -1

    public init(directories: @escaping @Sendable () -> [String], pollInterval: Duration = .seconds(2),
                forcePolling: Bool = false, fingerprint: @escaping @Sendable () throws -> Fingerprint) {
        self.directories = directories
        self.takeFingerprint = fingerprint
        self.pollInterval = pollInterval
        self.mechanism = .polling
        #if os(Linux)
        if !forcePolling {
            let fd = inotify_init1(Int32(O_NONBLOCK | O_CLOEXEC))
            if fd >= 0 {
                inotifyFD = fd
                mechanism = .inotify
                addWatches()
            }
        }
        #endif
    }

    deinit {
        if inotifyFD >= 0 { POSIX.close(inotifyFD) }
    }

    /// The fingerprint now.
    public func fingerprint() throws -> Fingerprint {
        try takeFingerprint()
    }

    /// Blocks until the fingerprint differs from `previous` and returns the new one, or
    /// returns nil when `timeout` passes first (nil timeout: wait forever).
    public func waitForChange(since previous: Fingerprint, timeout: Duration? = nil) throws -> Fingerprint? {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        while true {
            let current = try fingerprint()
            if current != previous { return current }
            var wait = pollInterval
            if let deadline {
                let left = deadline - clock.now
                if left <= .zero { return nil }
                wait = min(wait, left)
            }
            sleepOrWake(for: wait)
        }
    }

    private func sleepOrWake(for duration: Duration) {
        let milliseconds = Int32(clamping: max(1, duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000))
        #if os(Linux)
        if inotifyFD >= 0 {
            addWatches() // directories a sync tool created since the last wait
            var pfd = pollfd(fd: inotifyFD, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, milliseconds) > 0 {
                drainEvents()
                // Let a burst of writes (a sync tool copying several files) settle a little.
                usleep(20_000)
                drainEvents()
            }
            return
        }
        #endif
        usleep(UInt32(clamping: Int(milliseconds) * 1000))
    }

    #if os(Linux)
    private static var watchMask: UInt32 { 0x2 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 } // MODIFY, CLOSE_WRITE, MOVED_FROM/TO, CREATE, DELETE

    private func addWatches() {
        for directory in directories() where POSIX.isDirectory(directory) {
            _ = inotify_add_watch(inotifyFD, directory, Self.watchMask)
        }
    }

    private func drainEvents() {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(inotifyFD, $0.baseAddress!, $0.count) }
            if n <= 0 { return }
        }
    }
    #endif
}
