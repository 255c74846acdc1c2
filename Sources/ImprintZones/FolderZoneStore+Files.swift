#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ImprintFiles

/// The folder zone store's view of the file system: the `ImprintFiles` leaf's primitives
/// (no-clobber atomic publish, listing, directory fsync), with their `FileError`s reported as
/// `ZoneError`s, plus the two things only a zone folder needs (a bounded read that never
/// follows a link or blocks on a FIFO, and a file's version stamp). Nothing else in
/// ImprintZones touches files directly.
enum FolderFiles {
    /// A file's identity and version: a file a writer published never changes, so an equal
    /// stamp means equal content; a sync tool replacing it changes the stamp.
    struct Stamp: Hashable, Sendable {
        var device: UInt64, inode: UInt64, size: Int64, modifiedSeconds: Int64, modifiedNanoseconds: Int64
    }

    /// Runs `body`, reporting a `FileError` as a `ZoneError` (`.io`, or `.payloadTooLarge`).
    static func converting<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as FileError {
            throw ZoneError(error == .tooLarge ? .payloadTooLarge : .io, error.description)
        }
    }

    /// Publishes `bytes` at `path` unless a file is there (`AtomicFile.createExclusively`:
    /// temporary, fsync, hard link that never replaces, directory fsync). Returns false when
    /// `path` already existed (nothing changed).
    static func publishNew(_ bytes: [UInt8], at path: String) throws -> Bool {
        try converting { try AtomicFile.createExclusively(bytes, at: path) }
    }

    static func fsyncDirectory(_ path: String) throws {
        try converting { try POSIX.fsyncDirectory(path) }
    }

    /// The whole file, refusing one over `limit` bytes (so a hostile file cannot take memory).
    /// Never follows a symbolic link and never blocks on a FIFO a hostile peer planted.
    static func read(_ path: String, limit: Int) throws -> [UInt8] {
        let fd = try converting { try POSIX.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) }
        defer { POSIX.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ZoneError(.io, "stat \(path): \(POSIX.errorMessage(errno))") }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw ZoneError(.io, "\(path) is not a regular file") }
        guard st.st_size <= Int64(limit) else { throw ZoneError(.payloadTooLarge, "\(path) is \(st.st_size) bytes, limit \(limit)") }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var filled = 0
        while filled < bytes.count {
            let n = try converting {
                try bytes.withUnsafeMutableBytes { try POSIX.pread(fd, UnsafeMutableRawBufferPointer(rebasing: $0[filled...]), offset: Int64(filled), path: path) }
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

    static func isDirectory(_ path: String) -> Bool { POSIX.isDirectory(path) }

    static func exists(_ path: String) -> Bool { POSIX.exists(path) }

    /// Names in a directory (none when it does not exist or is not a directory).
    static func list(_ path: String) throws -> [String] {
        guard POSIX.isDirectory(path) else { return [] }
        return try converting { try POSIX.listDirectory(path) }
    }

    static func makeDirectories(_ path: String) throws {
        try converting { try POSIX.makeDirectories(path) }
    }

    /// Moves a directory out of the way in one rename, then removes it.
    static func removeTree(_ path: String, via trash: String) throws {
        try converting { try POSIX.rename(path, trash) }
        try? fsyncDirectory(POSIX.parentDirectory(of: path))
        try? POSIX.removeTree(trash)
    }
}
