#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `lstat` says about one path, enough to tell whether anything wrote to it: size,
/// modification time, status-change time and inode.
///
/// The status-change time (`ctime`) is the one a sync tool cannot set: Syncthing, Dropbox,
/// `cp -p` and rsync copy the *modification* time of the source file, so a log that is still
/// arriving can carry an `mtime` from last week, but every write, rename or `utime` moves its
/// `ctime` to now. ``isQuiet(for:now:)`` therefore looks at both.
public struct FileStamp: Sendable, Equatable {
    public var size: Int64
    public var modifiedNanoseconds: Int64
    public var changedNanoseconds: Int64
    public var inode: UInt64
    /// True for a directory.
    public var isDirectory: Bool

    /// The stamp of `path` (not following a final symlink), or nil when it does not exist.
    public static func take(_ path: String) -> FileStamp? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        #if canImport(Darwin)
        let modified = Int64(st.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(st.st_mtimespec.tv_nsec)
        let changed = Int64(st.st_ctimespec.tv_sec) * 1_000_000_000 + Int64(st.st_ctimespec.tv_nsec)
        #else
        let modified = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        let changed = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
        #endif
        return FileStamp(size: Int64(st.st_size), modifiedNanoseconds: modified, changedNanoseconds: changed,
                         inode: UInt64(st.st_ino), isDirectory: (st.st_mode & S_IFMT) == S_IFDIR)
    }

    /// The wall clock now, in the same unit as the stamps.
    public static func nowNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// The last time anything wrote to the path or changed its metadata.
    public var lastTouchedNanoseconds: Int64 { max(modifiedNanoseconds, changedNanoseconds) }

    /// True when nothing touched the path for at least `period` before `now`. A stamp from the
    /// future (a clock that moved back, a tool that set a future `mtime`) is not quiet while
    /// its `ctime` is recent, and a future `mtime` alone does not hold a file back forever:
    /// only `ctime`, which the kernel sets, is compared when `mtime` lies ahead of `now`.
    public func isQuiet(for period: Duration, now: Int64 = FileStamp.nowNanoseconds()) -> Bool {
        let periodNanoseconds = period.components.seconds * 1_000_000_000 + period.components.attoseconds / 1_000_000_000
        let touched = modifiedNanoseconds > now ? changedNanoseconds : lastTouchedNanoseconds
        return now - touched >= periodNanoseconds
    }
}

/// The stamps of every path under a directory (the directory itself included), for telling
/// whether a copy of a bundle is still arriving. Bounded: a tree with more than `limit`
/// entries is reported as such rather than walked further.
public struct TreeStamp: Sendable, Equatable {
    /// Path → stamp.
    public var entries: [String: FileStamp]
    /// True when the walk stopped at the entry limit.
    public var truncated: Bool

    public static func take(_ root: String, limit: Int = 100_000) -> TreeStamp {
        var entries: [String: FileStamp] = [:]
        var pending = [root]
        var truncated = false
        while let path = pending.popLast() {
            guard let stamp = FileStamp.take(path) else { continue }
            entries[path] = stamp
            if entries.count >= limit { truncated = true; break }
            if stamp.isDirectory, let names = try? POSIX.listDirectory(path) {
                pending.append(contentsOf: names.map { path + "/" + $0 })
            }
        }
        return TreeStamp(entries: entries, truncated: truncated)
    }

    /// True when every entry is quiet for `period` (see `FileStamp.isQuiet`).
    public func isQuiet(for period: Duration, now: Int64 = FileStamp.nowNanoseconds()) -> Bool {
        !truncated && entries.values.allSatisfy { $0.isQuiet(for: period, now: now) }
    }
}
