import Foundation
import Hummingbird
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Uploaded asset blobs as files under `<data>/zone-assets`, content-addressed:
/// `<aa>/<sha256 hex>` (inline assets live in the database's `zone_inline_blobs`).
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

    /// Moves `staged` into place as blob `staged.hash`, durably: its directory is fsynced (the
    /// staged file was).
    func place(_ staged: StagedAsset) throws {
        let directory = root.appendingPathComponent(String(staged.hash.prefix(2)), isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard rename(staged.path, path(staged.hash)) == 0 else {
            throw AssetFileError(operation: "rename", path: staged.path, code: errno)
        }
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw AssetFileError(operation: "open", path: directory.path, code: errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw AssetFileError(operation: "fsync", path: directory.path, code: errno) }
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

