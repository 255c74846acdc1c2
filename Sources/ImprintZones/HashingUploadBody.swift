import Crypto
import Foundation
import NIOCore

/// The body of an `uploadAsset` request: the asset's bytes as a sequence of pieces of at most
/// ``pieceSize`` bytes, each hashed (SHA-256) as it is copied into the buffer the connection
/// sends. The hash of what went out is known once the last piece did (``sentAsset()``), so the
/// client checks the service's answer without hashing the bytes before the request: the hash
/// of a piece runs while the one before it is on the wire.
///
/// Meant to be iterated once: if an HTTP client iterated it twice (to resend the body), or
/// stopped early, ``sentAsset()`` is nil and the check fails closed.
struct HashingUploadBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// Bytes per piece: large enough that the hop per piece is noise, small enough that
    /// hashing and sending overlap.
    static let pieceSize = 256 << 10

    private let bytes: [UInt8]
    private let progress = Progress()

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The hash and size of what the body handed out, once it handed out every byte exactly
    /// once; nil before that. An empty body has nothing to hand out: an HTTP client may send
    /// it without iterating it at all.
    func sentAsset() -> ZoneAsset? {
        progress.lock.withLock {
            let once = progress.iterations == 1 || (bytes.isEmpty && progress.iterations == 0)
            guard once, progress.hashed == bytes.count else { return nil }
            return ZoneAsset(hash: SHA256Hex.hex(progress.hasher.finalize()), size: progress.hashed)
        }
    }

    func makeAsyncIterator() -> Iterator {
        progress.lock.withLock { progress.iterations += 1 }
        return Iterator(body: self)
    }

    struct Iterator: AsyncIteratorProtocol {
        let body: HashingUploadBody
        var offset = 0

        mutating func next() async -> ByteBuffer? {
            guard offset < body.bytes.count else { return nil }
            let range = offset..<Swift.min(body.bytes.count, offset + HashingUploadBody.pieceSize)
            offset = range.upperBound
            let progress = body.progress
            return body.bytes.withUnsafeBytes { all in
                let piece = UnsafeRawBufferPointer(rebasing: all[range])
                progress.lock.withLock {
                    progress.hasher.update(bufferPointer: piece)
                    progress.hashed += piece.count
                }
                return ByteBuffer(bytes: piece)
            }
        }
    }

    /// What was handed out so far; every field is read and written under `lock`.
    private final class Progress: @unchecked Sendable {
        let lock = NSLock()
        var hasher = SHA256()
        var hashed = 0
        var iterations = 0
    }
}
