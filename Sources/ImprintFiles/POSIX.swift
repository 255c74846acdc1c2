#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin, errno-checked wrappers around the system calls the file layers need (bundles, key
/// store, zone folders). Every function retries on EINTR and throws `FileError` (`.notFound`
/// for ENOENT, else `.io`) with the path and errno on failure.
package enum POSIX {
    package static func errorMessage(_ err: Int32) -> String {
        String(cString: strerror(err))
    }

    package static func ioError(_ what: String, path: String, err: Int32 = errno) -> FileError {
        FileError(err == ENOENT ? .notFound : .io, "\(what): \(errorMessage(err))", path: path, errno: err)
    }

    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
        while true {
            let fd = Glibc_open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno == EINTR { continue }
            throw ioError("open", path: path)
        }
    }

    package static func close(_ fd: Int32) {
        _ = systemClose(fd)
    }

    package static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < buffer.count {
            let n = systemWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw ioError("write", path: path)
            }
            offset += n
        }
    }

    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        try bytes.withUnsafeBytes { try writeAll(fd, $0, path: path) }
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns the number read (0 at end of file).
    package static func pread(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, offset: Int64, path: String) throws -> Int {
        var total = 0
        while total < buffer.count {
            let n = systemPread(fd, buffer.baseAddress! + total, buffer.count - total, off_t(offset) + off_t(total))
            if n < 0 {
                if errno == EINTR { continue }
                throw ioError("read", path: path)
            }
            if n == 0 { break }
            total += n
        }
        return total
    }

    /// Reads up to `buffer.count` bytes from the current position (0 at end of file).
    package static func read(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
        while true {
            let n = systemRead(fd, buffer.baseAddress!, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw ioError("read", path: path)
            }
            return n
        }
    }

    package static func fsync(_ fd: Int32, path: String) throws {
        while systemFsync(fd) != 0 {
            if errno == EINTR { continue }
            throw ioError("fsync", path: path)
        }
    }

    package static func fileSize(_ fd: Int32, path: String) throws -> Int64 {
        var st = stat()
        if fstat(fd, &st) != 0 { throw ioError("fstat", path: path) }
        return Int64(st.st_size)
    }

    package static func truncate(_ fd: Int32, to length: Int64, path: String) throws {
        while ftruncate(fd, off_t(length)) != 0 {
            if errno == EINTR { continue }
            throw ioError("ftruncate", path: path)
        }
    }

    package static func seek(_ fd: Int32, to offset: Int64, path: String) throws {
        if lseek(fd, off_t(offset), SEEK_SET) < 0 { throw ioError("lseek", path: path) }
    }

    /// fsync on a directory, so that a rename or create inside it is durable.
    package static func fsyncDirectory(_ path: String) throws {
        let fd = try open(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        try fsync(fd, path: path)
    }

    package static func rename(_ from: String, _ to: String) throws {
        if systemRename(from, to) != 0 { throw ioError("rename to \(to)", path: from) }
    }

    package static func unlink(_ path: String) throws {
        if systemUnlink(path) != 0 { throw ioError("unlink", path: path) }
    }

    /// Creates a directory; succeeds if it already exists as a directory.
    package static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws {
        if mkdir(path, mode) == 0 { return }
        let err = errno
        if err == EEXIST, isDirectory(path) { return }
        throw ioError("mkdir", path: path, err: err)
    }

    /// Creates `path` and every missing parent.
    package static func makeDirectories(_ path: String) throws {
        if isDirectory(path) { return }
        let parent = parentDirectory(of: path)
        if parent != path, !parent.isEmpty { try makeDirectories(parent) }
        try makeDirectory(path)
    }

    package static func lstatMode(_ path: String) -> mode_t? {
        var st = stat()
        if lstat(path, &st) != 0 { return nil }
        return st.st_mode
    }

    /// Seconds since 1970 of the file's last modification (not following links), or nil.
    package static func modificationTime(_ path: String) -> Double? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        return Double(info.st_mtimespec.tv_sec) + Double(info.st_mtimespec.tv_nsec) / 1e9
        #else
        return Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        #endif
    }

    package static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        if stat(path, &st) != 0 { return false }
        return (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// "a directory", "a FIFO", "a symbolic link", … for what `path` is (not following links).
    package static func fileTypeName(_ path: String) -> String {
        guard let mode = lstatMode(path) else { return "nothing" }
        switch mode & S_IFMT {
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFLNK: return "a symbolic link"
        case S_IFSOCK: return "a socket"
        case S_IFCHR, S_IFBLK: return "a device file"
        case S_IFREG: return "a regular file"
        default: return "an unknown file type"
        }
    }

    package static func isRegularFile(_ path: String) -> Bool {
        guard let mode = lstatMode(path) else { return false }
        return (mode & S_IFMT) == S_IFREG
    }

    package static func exists(_ path: String) -> Bool {
        lstatMode(path) != nil
    }

    /// Names in a directory, excluding `.` and `..`, sorted.
    package static func listDirectory(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw ioError("opendir", path: path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name == "." || name == ".." { continue }
            names.append(name)
        }
        return names.sorted()
    }

    package static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    package static func lastComponent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// Removes a file or a directory tree (does not follow symlinks).
    package static func removeTree(_ path: String) throws {
        guard let mode = lstatMode(path) else { return }
        if (mode & S_IFMT) == S_IFDIR {
            for name in try listDirectory(path) {
                try removeTree(path + "/" + name)
            }
            if rmdir(path) != 0 { throw ioError("rmdir", path: path) }
        } else {
            try unlink(path)
        }
    }

    package static func randomSuffix() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        return String(value, radix: 36)
    }
}

// Unambiguous names for the libc functions that `POSIX` shadows.
private func Glibc_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Darwin)
    return Darwin.open(path, flags, mode)
    #elseif canImport(Musl)
    return Musl.open(path, flags, mode)
    #else
    return Glibc.open(path, flags, mode)
    #endif
}
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }
private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }
private func systemRead(_ fd: Int32, _ p: UnsafeMutableRawPointer, _ n: Int) -> Int { read(fd, p, n) }
private func systemPread(_ fd: Int32, _ p: UnsafeMutableRawPointer, _ n: Int, _ o: off_t) -> Int { pread(fd, p, n, o) }
private func systemFsync(_ fd: Int32) -> Int32 { fsync(fd) }
private func systemRename(_ a: String, _ b: String) -> Int32 { rename(a, b) }
private func systemUnlink(_ p: String) -> Int32 { unlink(p) }
