#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-file writes that are all-or-nothing across crashes and power loss.
///
/// The new content goes to a temporary file in the same directory
/// (`.<name>.tmp-<pid>-<random>`), which is fsync'd, renamed over the target, and then the
/// directory is fsync'd so the rename itself is durable. A reader sees either the old file
/// or the new one, never a mix. A crash can leave a stale temporary behind; names starting
/// with `.` and containing `.tmp-` are never content (bundles, key files, zone folders skip
/// them) and may be removed by `removeStaleTemporaries(in:)`. Failures throw `FileError`.
public enum AtomicFile {
    /// Writes `bytes` to `path` atomically.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
        try write(to: path, mode: mode) { fd, tempPath in
            try POSIX.writeAll(fd, bytes, path: tempPath)
        }
    }

    /// Writes a file atomically from a producer that writes into the temporary file's
    /// descriptor (for streamed content). The producer must not close the descriptor.
    public static func write(
        to path: String,
        mode: mode_t = 0o644,
        producer: (_ fd: Int32, _ temporaryPath: String) throws -> Void
    ) throws {
        let temporary = try writeTemporary(for: path, mode: mode, producer: producer)
        var committed = false
        defer {
            if !committed { _ = unlink(temporary) }
        }
        try POSIX.rename(temporary, path)
        committed = true
        try POSIX.fsyncDirectory(POSIX.parentDirectory(of: path))
    }

    /// Creates `path` with `bytes` only if it does not exist yet, all-or-nothing: the
    /// content goes to a temporary file (fsync'd), which is then hard-linked to `path`, which
    /// fails if `path` exists, so of several processes creating at once exactly one wins and
    /// nobody ever sees a partial file. Returns whether this call created it.
    @discardableResult
    public static func createExclusively(_ bytes: [UInt8], at path: String, mode: mode_t = 0o644) throws -> Bool {
        let temporary = try writeTemporary(for: path, mode: mode) { fd, temporary in
            try POSIX.writeAll(fd, bytes, path: temporary)
        }
        defer { _ = unlink(temporary) }
        if link(temporary, path) != 0 {
            let err = errno
            if err == EEXIST { return false }
            throw POSIX.ioError("link to \(path)", path: temporary, err: err)
        }
        try POSIX.fsyncDirectory(POSIX.parentDirectory(of: path))
        return true
    }

    /// A new temporary next to `path` (`temporaryPath(for:)`), filled by `producer` and
    /// fsync'd; removed again if anything fails. The caller renames or links it into place.
    private static func writeTemporary(
        for path: String, mode: mode_t, producer: (_ fd: Int32, _ temporaryPath: String) throws -> Void
    ) throws -> String {
        let temporary = temporaryPath(for: path)
        let fd = try POSIX.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: mode)
        do {
            try producer(fd, temporary)
            try POSIX.fsync(fd, path: temporary)
        } catch {
            POSIX.close(fd)
            _ = unlink(temporary)
            throw error
        }
        POSIX.close(fd)
        return temporary
    }

    /// Moves an already-complete, already-fsync'd file into place and makes the rename durable.
    public static func commit(temporary: String, to path: String) throws {
        try POSIX.rename(temporary, path)
        try POSIX.fsyncDirectory(POSIX.parentDirectory(of: path))
    }

    /// A fresh temporary path next to `path`, recognisable by `isTemporaryName`.
    public static func temporaryPath(for path: String) -> String {
        let directory = POSIX.parentDirectory(of: path)
        let name = POSIX.lastComponent(of: path)
        return "\(directory)/.\(name).tmp-\(getpid())-\(POSIX.randomSuffix())"
    }

    /// True for names produced by `temporaryPath(for:)`.
    public static func isTemporaryName(_ name: String) -> Bool {
        name.hasPrefix(".") && name.contains(".tmp-")
    }

    /// Removes temporaries left behind by crashed writers in `directory` that were last
    /// modified more than `age` ago (a live writer's temporary is younger than that). With
    /// `age` zero, only call this while holding the lock every writer of that directory takes.
    @discardableResult
    public static func removeStaleTemporaries(in directory: String, olderThan age: Duration = .zero) throws -> Int {
        guard POSIX.isDirectory(directory) else { return 0 }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let cutoff = Int64(now.tv_sec) - age.components.seconds
        var removed = 0
        for name in try POSIX.listDirectory(directory) where isTemporaryName(name) {
            let full = directory + "/" + name
            var st = stat()
            guard lstat(full, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG || (st.st_mode & S_IFMT) == S_IFDIR else { continue }
            #if canImport(Darwin)
            let modified = Int64(st.st_mtimespec.tv_sec)
            #else
            let modified = Int64(st.st_mtim.tv_sec)
            #endif
            guard age == .zero || modified < cutoff else { continue }
            if (st.st_mode & S_IFMT) == S_IFDIR {
                if (try? POSIX.removeTree(full)) != nil { removed += 1 } // an abandoned unarchive staging directory
            } else if unlink(full) == 0 {
                removed += 1
            }
        }
        return removed
    }

    /// Reads a whole (small) file, refusing files larger than `limit`.
    public static func read(_ path: String, limit: Int = 64 << 20) throws -> [UInt8] {
        // A directory, FIFO or device where a file belongs is damage; a FIFO would also block.
        if let mode = POSIX.lstatMode(path), (mode & S_IFMT) != S_IFREG {
            throw FileError(.wrongType, "\(POSIX.fileTypeName(path)) where a file belongs", path: path)
        }
        let fd = try POSIX.open(path, O_RDONLY | O_NONBLOCK)
        defer { POSIX.close(fd) }
        let size = try POSIX.fileSize(fd, path: path)
        guard size <= Int64(limit) else {
            throw FileError(.tooLarge, "file is \(size) bytes, limit is \(limit)", path: path)
        }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        let n = try bytes.withUnsafeMutableBytes { try POSIX.pread(fd, $0, offset: 0, path: path) }
        bytes.removeLast(bytes.count - n)
        return bytes
    }
}
