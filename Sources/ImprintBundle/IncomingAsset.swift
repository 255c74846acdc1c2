#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import ImprintFiles

/// An asset being added piece by piece: written to a temporary file in the assets directory
/// and hashed on the way; ``finish(expecting:)`` fsyncs it and renames it to its hash. For
/// sources that arrive in pieces from elsewhere (a download, a decryption), so the bytes are
/// written once and hashed once. An incoming asset that is never finished leaves nothing
/// behind (its temporary file is removed).
///
/// ```swift
/// let incoming = try bundle.store.assets.incoming()
/// for try await piece in download { try incoming.write(piece) }
/// let id = try incoming.finish(expecting: announcedID)   // throws `.corrupt` if the bytes are not it
/// ```
public final class IncomingAsset {
    private let store: AssetStore
    private let temporary: String
    private var descriptor: Int32?
    private var hasher = SHA256()
    private var committed = false

    init(store: AssetStore) throws {
        try POSIX.makeDirectories(store.directory)
        self.store = store
        temporary = AtomicFile.temporaryPath(for: store.directory + "/asset")
        descriptor = try POSIX.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
    }

    deinit {
        if let descriptor { POSIX.close(descriptor) }
        if !committed { _ = unlink(temporary) }
    }

    /// Appends `bytes`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let descriptor else { throw BundleError(.invalidArgument, "the incoming asset is already finished") }
        hasher.update(bufferPointer: bytes)
        try POSIX.writeAll(descriptor, bytes, path: temporary)
    }

    /// Appends `bytes`.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Makes the asset durable under its id and returns the id. With `expecting`, bytes that
    /// do not hash to it throw ``BundleError/Code/corrupt`` and nothing is added.
    @discardableResult
    public func finish(expecting expected: AssetID? = nil) throws -> AssetID {
        guard let descriptor else { throw BundleError(.invalidArgument, "the incoming asset is already finished") }
        self.descriptor = nil
        defer { POSIX.close(descriptor) }
        let id = AssetID(digest: hasher.finalize())
        if let expected, id != expected {
            throw BundleError(.corrupt, "the bytes added as asset \(expected.hex) hash to \(id.hex)")
        }
        try POSIX.fsync(descriptor, path: temporary)
        // Always rename, even over an identical existing file: the bytes are the same, and an
        // asset removed concurrently (between a "does it exist" check and returning) would
        // otherwise be reported added but missing. Identical content is still stored once.
        try AtomicFile.commit(temporary: temporary, to: store.path(of: id))
        committed = true
        return id
    }
}
