import Crypto
import Foundation
import ImprintEncoding
import ImprintMLS

/// How a shared asset is encrypted for its zone records: a fresh random AES-256-GCM key per
/// asset (it travels to the members inside an MLS message, ``AttachmentAnnouncement``), the
/// bytes cut into segments of ``segmentBytes`` that each seal to exactly 1 MiB, one segment
/// per `attachment` record.
///
/// - Segment `i` is sealed with the nonce `0x00000000 ‖ uint64(i)` (the key is used for this
///   one asset only, so nonces never repeat) and authenticates
///   `"IMA1" ‖ asset id ‖ uint64(size) ‖ uint32(i) ‖ uint32(count)`: a segment moved to another
///   place, another asset or a truncated sequence does not open.
/// - The last segment is padded with zeros to a size bucket (``SyncPayload/bucket(for:)``,
///   at most a whole segment), so the stored size says little more than the bucket.
/// - Whoever fetches checks the SHA-256 of the whole plaintext against the asset id before
///   the asset reaches a bundle.
///
/// ```swift
/// let cipher = AttachmentCipher(key: SymmetricKey(size: .bits256), asset: id, size: 3_000_000)
/// let sealed = try cipher.seal(firstSegment, index: 0)        // 1 MiB
/// let plain = try cipher.open(sealed, index: 0)
/// ```
struct AttachmentCipher: Sendable {
    /// Plaintext bytes per segment: a sealed segment (ciphertext and tag) is exactly 1 MiB.
    static let segmentBytes = (1 << 20) - 16
    static let label: [UInt8] = Array("IMA1".utf8)

    let key: SymmetricKey
    /// The asset id's 32 bytes (SHA-256 of the plaintext).
    let asset: [UInt8]
    let size: UInt64

    init(key: SymmetricKey, asset: [UInt8], size: UInt64) {
        self.key = key
        self.asset = asset
        self.size = size
    }

    /// Segments the asset is cut into (one, empty, for an empty asset).
    var segmentCount: Int { max(1, Int((size + UInt64(Self.segmentBytes) - 1) / UInt64(Self.segmentBytes))) }

    /// Plaintext bytes of segment `index`, before padding.
    func plaintextBytes(ofSegment index: Int) -> Int {
        index < segmentCount - 1 ? Self.segmentBytes : Int(size - UInt64(segmentCount - 1) * UInt64(Self.segmentBytes))
    }

    /// Bytes segment `index` occupies in the zone (padded plaintext and the 16-byte tag).
    func sealedBytes(ofSegment index: Int) -> Int { paddedBytes(ofSegment: index) + 16 }

    private func paddedBytes(ofSegment index: Int) -> Int {
        index < segmentCount - 1 ? Self.segmentBytes : min(Self.segmentBytes, SyncPayload.bucket(for: plaintextBytes(ofSegment: index)))
    }

    /// Seals segment `index`, whose plaintext is `plaintext` (exactly ``plaintextBytes(ofSegment:)`` bytes).
    func seal(_ plaintext: [UInt8], index: Int) throws -> [UInt8] {
        guard index >= 0, index < segmentCount, plaintext.count == plaintextBytes(ofSegment: index) else {
            throw SyncError(.invalidArgument, "segment \(index) of \(segmentCount) must hold \(index < segmentCount && index >= 0 ? plaintextBytes(ofSegment: index) : 0) bytes, not \(plaintext.count)")
        }
        var padded = plaintext
        padded.append(contentsOf: repeatElement(0, count: paddedBytes(ofSegment: index) - plaintext.count))
        let box = try AES.GCM.seal(padded, using: key, nonce: try nonce(index), authenticating: authenticatedData(index))
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// Opens segment `index` and returns its plaintext without the padding. Throws
    /// ``SyncError/Code/assetTampered`` for a segment that is not what was sealed there.
    func open(_ sealed: [UInt8], index: Int) throws(SyncError) -> [UInt8] {
        guard index >= 0, index < segmentCount, sealed.count == sealedBytes(ofSegment: index) else {
            throw SyncError(.assetTampered, "segment \(index) of asset \(Hex.encode(asset)) is \(sealed.count) bytes, not \(index >= 0 && index < segmentCount ? sealedBytes(ofSegment: index) : 0)")
        }
        do {
            let box = try AES.GCM.SealedBox(nonce: try nonce(index), ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
            let padded = try AES.GCM.open(box, using: key, authenticating: authenticatedData(index))
            return Array(padded.prefix(plaintextBytes(ofSegment: index)))
        } catch {
            throw SyncError(.assetTampered, "segment \(index) of asset \(Hex.encode(asset)) does not decrypt: it was changed")
        }
    }

    private func nonce(_ index: Int) throws -> AES.GCM.Nonce {
        var w = TLSWriter(capacity: 12)
        w.writeUInt32(0)
        w.writeUInt64(UInt64(index))
        return try AES.GCM.Nonce(data: w.bytes)
    }

    private func authenticatedData(_ index: Int) -> [UInt8] {
        var w = TLSWriter(capacity: 56)
        w.writeBytes(Self.label)
        w.writeBytes(asset)
        w.writeUInt64(size)
        w.writeUInt32(UInt32(index))
        w.writeUInt32(UInt32(segmentCount))
        return w.bytes
    }
}
