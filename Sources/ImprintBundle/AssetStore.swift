#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation
import ImprintFiles

/// Content-addressed asset files: `assets/<sha256 hex>`.
///
/// Adding streams the source in `chunkSize` pieces, hashing while copying into a temporary
/// file in the same directory, then fsyncs and renames it to its hash (replacing an identical
/// asset that is already there, so each content is stored once). No operation holds a whole asset in memory. The
/// document references assets by `AssetID`.
public struct AssetStore: Sendable {
    public static let defaultChunkSize = 1 << 20

    public let directory: String
    public let chunkSize: Int

    public init(directory: String, chunkSize: Int = defaultChunkSize) {
        self.directory = directory
        self.chunkSize = max(4096, chunkSize)
    }

    public init(layout: BundleLayout, chunkSize: Int = defaultChunkSize) {
        self.init(directory: layout.assetsPath, chunkSize: chunkSize)
    }

    public struct Asset: Sendable, Equatable {
        public var id: AssetID
        public var size: Int64
    }

    // MARK: Adding

    /// Adds the file at `path` (streamed). Returns its id; adding the same bytes twice
    /// stores them once.
    @discardableResult
    public func add(contentsOf path: String) throws -> AssetID {
        let fd = try POSIX.open(path, O_RDONLY)
        defer { POSIX.close(fd) }
        return try add(readingFrom: fd, sourceName: path)
    }

    /// Adds everything readable from `fd` (a file, pipe or socket) until end of file. Does not
    /// close `fd`.
    @discardableResult
    public func add(readingFrom fd: Int32, sourceName: String = "<descriptor>") throws -> AssetID {
        try add { buffer in try POSIX.read(fd, buffer, path: sourceName) }
    }

    /// Adds everything readable from `handle` until end of file (streamed). Does not close it.
    @discardableResult
    public func add(from handle: FileHandle) throws -> AssetID {
        try add(readingFrom: handle.fileDescriptor, sourceName: "<file handle>")
    }

    /// Adds the file at `url` (streamed).
    @discardableResult
    public func add(contentsOf url: URL) throws -> AssetID {
        try add(contentsOf: url.path)
    }

    /// Adds bytes already in memory.
    @discardableResult
    public func add(bytes: [UInt8]) throws -> AssetID {
        var offset = 0
        return try add { buffer in
            let n = min(buffer.count, bytes.count - offset)
            bytes.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + n)]))
            }
            offset += n
            return n
        }
    }

    /// Adds from a reader that fills the buffer it is given and returns the byte count,
    /// 0 at the end. The buffer is `chunkSize` bytes.
    @discardableResult
    public func add(reader: (UnsafeMutableRawBufferPointer) throws -> Int) throws -> AssetID {
        let incoming = try self.incoming()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try reader(buffer)
            if n == 0 { break }
            guard n > 0, n <= buffer.count else {
                throw BundleError(.invalidArgument, "asset reader returned \(n) for a \(buffer.count)-byte buffer")
            }
            try incoming.write(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        return try incoming.finish()
    }

    /// A new asset to write piece by piece (``IncomingAsset``).
    public func incoming() throws -> IncomingAsset { try IncomingAsset(store: self) }

    // MARK: Reading

    /// Where the asset with `id` lives (whether or not it exists).
    public func path(of id: AssetID) -> String { directory + "/" + id.hex }

    /// The asset's file as a URL, for APIs that want one (open it read-only; never modify it).
    public func url(of id: AssetID) throws -> URL {
        let file = path(of: id)
        guard POSIX.isRegularFile(file) else { throw BundleError(.notFound, "no asset \(id.hex)", path: file) }
        return URL(fileURLWithPath: file)
    }

    public func contains(_ id: AssetID) -> Bool { POSIX.isRegularFile(path(of: id)) }

    /// The size of a stored asset.
    public func size(of id: AssetID) throws -> Int64 {
        let fd = try openAsset(id)
        defer { POSIX.close(fd) }
        return try POSIX.fileSize(fd, path: path(of: id))
    }

    /// Streams the asset to `consumer` in chunks. With `verify`, the bytes are re-hashed on
    /// the way and a mismatch throws `.corrupt` after the last chunk (the consumer must treat
    /// what it received as untrusted until this returns).
    public func read(_ id: AssetID, verify: Bool = true, consumer: (UnsafeRawBufferPointer) throws -> Void) throws {
        let fd = try openAsset(id)
        defer { POSIX.close(fd) }
        let file = path(of: id)
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try POSIX.read(fd, buffer, path: file)
            if n == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            if verify { hasher.update(bufferPointer: chunk) }
            try consumer(chunk)
        }
        if verify, AssetID(digest: hasher.finalize()) != id {
            throw BundleError(.corrupt, "asset content does not match its hash", path: file)
        }
    }

    /// Streams the asset into `fd` (not closed).
    public func write(_ id: AssetID, to fd: Int32, verify: Bool = true) throws {
        try read(id, verify: verify) { chunk in try POSIX.writeAll(fd, chunk, path: "<output>") }
    }

    /// Copies the asset to a new file at `destination`, atomically; verifies the hash first-hand.
    public func export(_ id: AssetID, to destination: String) throws {
        try AtomicFile.write(to: destination) { fd, temporary in
            try read(id, verify: true) { chunk in try POSIX.writeAll(fd, chunk, path: temporary) }
        }
    }

    /// Whether the stored bytes still hash to `id`.
    public func verify(_ id: AssetID) throws -> Bool {
        do {
            try read(id, verify: true) { _ in }
            return true
        } catch let error as BundleError where error.code == .corrupt {
            return false
        }
    }

    /// Every stored asset, sorted by id. Files whose names are not asset ids are ignored.
    public func list() throws -> [Asset] {
        guard POSIX.isDirectory(directory) else { return [] }
        var assets: [Asset] = []
        for name in try POSIX.listDirectory(directory) {
            guard let id = try? AssetID(hex: name) else { continue }
            var st = stat()
            guard lstat(directory + "/" + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            assets.append(Asset(id: id, size: Int64(st.st_size)))
        }
        return assets
    }

    /// Removes an asset. Returns false if it was not there.
    @discardableResult
    public func remove(_ id: AssetID) throws -> Bool {
        let file = path(of: id)
        guard POSIX.exists(file) else { return false }
        try POSIX.unlink(file)
        try POSIX.fsyncDirectory(directory)
        return true
    }

    private func openAsset(_ id: AssetID) throws -> Int32 {
        let file = path(of: id)
        guard POSIX.isRegularFile(file) else {
            throw BundleError(.notFound, "no asset \(id.hex)", path: file)
        }
        return try POSIX.open(file, O_RDONLY | O_NOFOLLOW)
    }
}
