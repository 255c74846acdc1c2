import Crypto
import Foundation
import Hummingbird
import ImprintServer
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Asset bytes written to a temporary file, with their SHA-256 and length: the first half of
/// every upload (the store's `commitUpload` places the file, or copies it into PostgreSQL).
/// A body is streamed through, one received buffer at a time, never held whole, and hashed
/// as it is written. An uploaded body is fsynced here when the store keeps the file itself
/// (`ZoneServiceStore.keepsStagedFiles`); a store that copies the bytes into its database
/// makes them durable by its own commit. Inline bytes are never fsynced here: the store keeps
/// them in its database, in the transaction of the records that name them (SQLite from
/// ``inlineBytes``, PostgreSQL from the file).
struct StagedAsset: Sendable {
    let path: String
    let hash: String
    let size: Int
    /// The bytes themselves, for inline `assetData` (a few KiB): the SQLite store keeps those
    /// in its database and never reads the file.
    var inlineBytes: Data?

    /// Streams `body` to a new file in `directory`, refusing more than `limit` bytes (413);
    /// the file is fsynced before this returns if `durable`.
    static func stage(_ body: RequestBody, limit: Int, in directory: URL, durable: Bool) async throws -> StagedAsset {
        let file = try StagingFile(directory: directory)
        do {
            var hasher = SHA256()
            var size = 0
            for try await buffer in body {
                size += buffer.readableBytes
                guard size <= limit else { throw DeliveryError.payloadTooLarge(limit: limit) }
                try buffer.withUnsafeReadableBytes { bytes in
                    hasher.update(bufferPointer: bytes)
                    try file.write(bytes)
                }
            }
            let digest = hasher.finalize()
            guard durable else { return try file.finish(hash: digest, size: size, durable: false) }
            // The fsync waits for the disk: on the blocking pool, not one of the few task threads.
            return try await NIOThreadPool.singleton.runIfActive { [size] in try file.finish(hash: digest, size: size, durable: true) }
        } catch {
            file.discard()
            throw error
        }
    }

    /// Stages bytes already in memory (inline `assetData`, at most a few KiB), not fsynced.
    static func stage(_ data: Data, in directory: URL) throws -> StagedAsset {
        let file = try StagingFile(directory: directory)
        do {
            try data.withUnsafeBytes { try file.write($0) }
            var staged = try file.finish(hash: SHA256.hash(data: data), size: data.count, durable: false)
            staged.inlineBytes = data
            return staged
        } catch {
            file.discard()
            throw error
        }
    }

    func discard() {
        unlink(path)
    }
}

/// An open temporary file; `finish` closes it (fsynced first if asked).
private final class StagingFile: @unchecked Sendable {
    let path: String
    let descriptor: Int32

    /// The staging directory is created when the first file finds it missing (and again if it
    /// was removed), not checked on every upload: a `mkdir` walk per upload was measurable.
    init(directory: URL) throws {
        path = directory.appendingPathComponent("upload-\(UUID().uuidString.lowercased()).tmp").path
        var descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor < 0, errno == ENOENT {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        }
        guard descriptor >= 0 else { throw AssetFileError(operation: "open", path: path, code: errno) }
        self.descriptor = descriptor
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw AssetFileError(operation: "write", path: path, code: errno)
            }
            offset += written
        }
    }

    func finish(hash: SHA256.Digest, size: Int, durable: Bool) throws -> StagedAsset {
        guard !durable || fsync(descriptor) == 0 else { throw AssetFileError(operation: "fsync", path: path, code: errno) }
        close(descriptor)
        return StagedAsset(path: path, hash: CommitDigest.hex(hash), size: size)
    }

    func discard() {
        close(descriptor)
        unlink(path)
    }
}

/// A file-system failure while storing or reading an asset: a server fault (500), logged.
struct AssetFileError: Error, CustomStringConvertible {
    let operation: String
    let path: String
    let code: Int32
    var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
}
