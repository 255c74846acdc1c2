import Foundation
import Hummingbird
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Uploaded asset blobs as files under `<data>/zone-assets`, content-addressed:
/// `<aa>/<sha256 hex>` (inline assets live in the database's `zone_inline_blobs`).
/// A staged upload (already fsynced) is linked (`placeLink`) or renamed (`place`) into place and
/// the directory fsynced, so a blob file is either absent or complete and durable; a blob of
/// the same hash already there holds identical bytes. An upload is linked before the
/// transaction that records it, so that its directory fsync runs beside other requests'
/// work rather than in SQLite's one writer; `remove` runs inside write transactions, which
/// SQLite runs one at a time, so the recording transaction checks (`exists`) that the blob is
/// still there and places the staged file again if garbage collection took it meanwhile.
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
        let directory = try directory(of: staged.hash)
        guard rename(staged.path, path(staged.hash)) == 0 else {
            throw AssetFileError(operation: "rename", path: staged.path, code: errno)
        }
        try Self.flush(directory: directory)
    }

    /// Makes the staged file (already fsynced) blob `staged.hash` as well, durably, leaving the
    /// staged name to its owner to discard: a hard link and an fsync of the blob's directory.
    /// A blob of that hash already there is left as it is (same bytes), and the directory is
    /// fsynced all the same, since its entry may be another upload's link not yet flushed.
    func placeLink(_ staged: StagedAsset) throws {
        let directory = try directory(of: staged.hash)
        guard link(staged.path, path(staged.hash)) == 0 || errno == EEXIST else {
            throw AssetFileError(operation: "link", path: staged.path, code: errno)
        }
        try Self.flush(directory: directory)
    }

    /// True if blob `hash` is there.
    func exists(_ hash: String) -> Bool {
        access(path(hash), F_OK) == 0
    }

    /// The directory of blob `hash`, created (and its own entry made durable) if missing.
    private func directory(of hash: String) throws -> String {
        let directory = root.appendingPathComponent(String(hash.prefix(2)), isDirectory: true).path
        guard access(directory, F_OK) != 0 else { return directory }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.flush(directory: root.path)
        return directory
    }

    private static func flush(directory: String) throws {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw AssetFileError(operation: "open", path: directory, code: errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw AssetFileError(operation: "fsync", path: directory, code: errno) }
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

