// TODO(leaf): move to ImprintFiles. The minimal POSIX file primitives the folder zone store
// needs (no-clobber atomic publish, bounded reads, listing, stamps); replace with the
// ImprintFiles leaf (AtomicFile & co.) when the branch that moves them out of ImprintBundle
// lands. Nothing else in ImprintZones touches files directly.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

enum FolderFiles {
    /// A file's identity and version: a file a writer published never changes, so an equal
    /// stamp means equal content; a sync tool replacing it changes the stamp.
    struct Stamp: Hashable, Sendable {
        var device: UInt64, inode: UInt64, size: Int64, modifiedSeconds: Int64, modifiedNanoseconds: Int64
    }

    static func ioError(_ what: String, _ path: String, _ err: Int32 = errno) -> ZoneError {
        ZoneError(.io, "\(what) \(path): \(String(cString: strerror(err)))")
    }

    /// Publishes `bytes` at `path` unless a file is there: written to a temporary in the same
    /// directory (`.<name>.tmp-<pid>-<random>`, a name no reader takes for content), fsync'd,
    /// hard-linked to `path` (which fails instead of replacing), the temporary unlinked and the
    /// directory fsync'd. Returns false when `path` already existed (nothing changed).
    static func publishNew(_ bytes: [UInt8], at path: String) throws -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary = "\(directory)/.\(name).tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ioError("create", temporary) }
        defer { unlink(temporary) }
        do {
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw ioError("write", temporary)
                }
                offset += n
            }
            guard fsync(fd) == 0 else { throw ioError("fsync", temporary) }
        } catch {
            close(fd)
            throw error
        }
        close(fd)
        if link(temporary, path) != 0 {
            if errno == EEXIST { return false }
            throw ioError("link", path)
        }
        try fsyncDirectory(directory)
        return true
    }

    static func fsyncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("open directory", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw ioError("fsync directory", path) }
    }

    /// The whole file, refusing one over `limit` bytes (so a hostile file cannot take memory).
    /// Never follows a symbolic link and never blocks on a FIFO a hostile peer planted.
    static func read(_ path: String, limit: Int) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw ioError("open", path) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ioError("stat", path) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw ZoneError(.io, "\(path) is not a regular file") }
        guard st.st_size <= Int64(limit) else { throw ZoneError(.payloadTooLarge, "\(path) is \(st.st_size) bytes, limit \(limit)") }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var filled = 0
        while filled < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + filled, $0.count - filled, off_t(filled)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ioError("read", path)
            }
            if n == 0 { break } // shrank while reading: return what is there, the decoder judges it
            filled += n
        }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }

    static func stamp(_ path: String) -> Stamp? {
        var st = stat()
        guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        #if canImport(Darwin)
        let modified = st.st_mtimespec
        #else
        let modified = st.st_mtim
        #endif
        return Stamp(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
                     modifiedSeconds: Int64(modified.tv_sec), modifiedNanoseconds: Int64(modified.tv_nsec))
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Names in a directory (none when it does not exist).
    static func list(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else {
            if errno == ENOENT || errno == ENOTDIR { return [] }
            throw ioError("list", path)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func makeDirectories(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw ZoneError(.io, "create directory \(path): \(error)")
        }
    }

    /// Moves a directory out of the way in one rename, then removes it.
    static func removeTree(_ path: String, via trash: String) throws {
        guard rename(path, trash) == 0 else { throw ioError("rename", path) }
        try? fsyncDirectory((path as NSString).deletingLastPathComponent)
        try? FileManager.default.removeItem(atPath: trash)
    }
}
