import Foundation
import Hummingbird
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Asset blobs as files under `<data>/zone-assets`, content-addressed: `<aa>/<sha256 hex>`.
/// A staged upload (already fsynced) is renamed into place and the directory fsynced, so a
/// blob file is either absent or complete; renaming over an existing blob of the same hash
/// replaces it with identical bytes. The SQLite store calls `place` and `remove` inside its
/// write transactions, which SQLite runs one at a time, so a blob is never removed while an
/// upload of the same hash is being recorded.
struct FileAssetBlobs: Sendable {
    let root: URL

    init(dataDirectory: URL) {
        root = dataDirectory.appendingPathComponent("zone-assets", isDirectory: true)
    }

    var stagingDirectory: URL { root.appendingPathComponent("staging", isDirectory: true) }

    func path(_ hash: String) -> String {
        root.appendingPathComponent(String(hash.prefix(2)), isDirectory: true).appendingPathComponent(hash).path
    }

    /// Moves `staged` into place as blob `staged.hash`: durably (its directory fsynced; the
    /// staged file was), or, with `durably: false`, for a `syncFileSystem` that follows
    /// before anything acknowledges it (inline assets, many to one save).
    func place(_ staged: StagedAsset, durably: Bool = true) throws {
        let directory = root.appendingPathComponent(String(staged.hash.prefix(2)), isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard rename(staged.path, path(staged.hash)) == 0 else {
            throw AssetFileError(operation: "rename", path: staged.path, code: errno)
        }
        guard durably else { return }
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw AssetFileError(operation: "open", path: directory.path, code: errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw AssetFileError(operation: "fsync", path: directory.path, code: errno) }
    }

    /// Makes blobs placed with `durably: false` durable, data and directory entries: on Linux
    /// with one `syncfs(2)` of the file system that holds them (one flush for a batch of
    /// inline assets instead of two fsyncs per asset, which cost 1.2 ms per 1 KiB record on
    /// the benchmark machine); elsewhere by an fsync of each file and of its directory.
    func syncFileSystem(placed hashes: [String]) throws {
        #if os(Linux)
        let descriptor = open(root.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw AssetFileError(operation: "open", path: root.path, code: errno) }
        defer { close(descriptor) }
        guard linuxSyncFS(descriptor) == 0 else { throw AssetFileError(operation: "syncfs", path: root.path, code: errno) }
        #else
        for target in Set(hashes.map(path)) + Set(hashes.map { (path($0) as NSString).deletingLastPathComponent }) {
            let descriptor = open(target, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw AssetFileError(operation: "open", path: target, code: errno) }
            defer { close(descriptor) }
            guard fsync(descriptor) == 0 else { throw AssetFileError(operation: "fsync", path: target, code: errno) }
        }
        #endif
    }

    func remove(_ hash: String) {
        unlink(path(hash))
    }

    /// Writes `range` of blob `hash` to `writer`, 64 KiB at a time.
    func write<Writer: ResponseBodyWriter>(hash: String, range: Range<Int>, to writer: inout Writer) async throws {
        let descriptor = open(path(hash), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw AssetFileError(operation: "open", path: path(hash), code: errno) }
        defer { close(descriptor) }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = min(64 << 10, range.upperBound - offset)
            var buffer = ByteBuffer()
            let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { bytes in
                let result = pread(descriptor, bytes.baseAddress, count, off_t(offset))
                guard result >= 0 else { throw AssetFileError(operation: "read", path: self.path(hash), code: errno) }
                return result
            }
            guard read > 0 else { throw AssetFileError(operation: "read (short)", path: path(hash), code: EIO) }
            offset += read
            try await writer.write(buffer)
        }
    }
}

#if os(Linux)
/// glibc's `int syncfs(int fd)`, declared by `<unistd.h>` only under `_GNU_SOURCE`, which
/// the Glibc module does not define; a plain C function of one `int`, bound by its symbol.
@_silgen_name("syncfs")
private func linuxSyncFS(_ descriptor: Int32) -> Int32
#endif
