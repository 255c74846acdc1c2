import Crypto
import Foundation
import ImprintTestSupport
@testable import ImprintSync
import Testing

/// The segment encryption of shared assets: every segment opens only where it was sealed
/// (its index, its asset, its count), a changed byte never opens, and the last segment's
/// padding hides the exact size.
@Suite struct AttachmentCipherTests {
    static func cipher(size: UInt64, asset: UInt8 = 1, key: SymmetricKey = SymmetricKey(data: [UInt8](repeating: 9, count: 32))) -> AttachmentCipher {
        AttachmentCipher(key: key, asset: [UInt8](repeating: asset, count: 32), size: size)
    }

    @Test func segmentsRoundTripAndTheLastIsPadded() throws {
        let seed = testSeed("AttachmentCipherTests.roundTrip", fallback: 0xC1F3)
        var rng = SplitMix64(seed: seed)
        for size in [0, 1, 255, 257, AttachmentCipher.segmentBytes, AttachmentCipher.segmentBytes + 1, 2 * AttachmentCipher.segmentBytes + 70_000] {
            let cipher = Self.cipher(size: UInt64(size))
            let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var restored: [UInt8] = []
            var offset = 0
            for index in 0..<cipher.segmentCount {
                let count = cipher.plaintextBytes(ofSegment: index)
                let sealed = try cipher.seal(Array(bytes[offset..<(offset + count)]), index: index)
                #expect(sealed.count == cipher.sealedBytes(ofSegment: index))
                #expect(sealed.count == 1 << 20 || index == cipher.segmentCount - 1, "every segment but the last seals to 1 MiB")
                restored += try cipher.open(sealed, index: index)
                offset += count
            }
            #expect(restored == bytes, "size \(size), seed \(seed)")
        }
        // Sizes inside one bucket are stored alike.
        #expect(Self.cipher(size: 300).sealedBytes(ofSegment: 0) == Self.cipher(size: 500).sealedBytes(ofSegment: 0))
    }

    @Test func aSegmentOpensOnlyWhereItWasSealed() throws {
        let size = UInt64(2 * AttachmentCipher.segmentBytes)
        let cipher = Self.cipher(size: size)
        let first = try cipher.seal([UInt8](repeating: 1, count: AttachmentCipher.segmentBytes), index: 0)
        let second = try cipher.seal([UInt8](repeating: 2, count: AttachmentCipher.segmentBytes), index: 1)
        #expect(try cipher.open(first, index: 0) == [UInt8](repeating: 1, count: AttachmentCipher.segmentBytes))
        #expect(throws: SyncError(.assetTampered, "")) { try cipher.open(second, index: 0) }   // reordered
        #expect(throws: SyncError(.assetTampered, "")) { try Self.cipher(size: size, asset: 2).open(first, index: 0) }  // another asset
        #expect(throws: SyncError(.assetTampered, "")) {                                         // another key
            try Self.cipher(size: size, key: SymmetricKey(size: .bits256)).open(first, index: 0)
        }
        // A sequence cut short: the same segment under a count of one does not open.
        #expect(throws: SyncError(.assetTampered, "")) { try Self.cipher(size: UInt64(AttachmentCipher.segmentBytes)).open(first, index: 0) }
        var flipped = first
        flipped[12_345] ^= 0x40
        #expect(throws: SyncError(.assetTampered, "")) { try cipher.open(flipped, index: 0) }
        #expect(throws: SyncError(.assetTampered, "")) { try cipher.open(Array(first.dropLast()), index: 0) }
        #expect(throws: SyncError(.assetTampered, "")) { try cipher.open(first, index: 2) }
        #expect(throws: SyncError.self) { try cipher.seal([1, 2, 3], index: 0) }
    }

    @Test func announcementsRoundTripAndRejectHostileBytes() throws {
        let entry = AttachmentAnnouncement.Entry(asset: [UInt8](repeating: 3, count: 32), size: 77, key: [UInt8](repeating: 4, count: 32),
                                                 recordBase: AttachmentAnnouncement.newRecordBase())
        let encoded = AttachmentAnnouncement([entry, entry]).encoded
        #expect(try AttachmentAnnouncement(decoding: encoded).entries == [entry, entry])
        for cut in 0..<encoded.count {
            #expect(throws: SyncError.self) { try AttachmentAnnouncement(decoding: Array(encoded.prefix(cut))) }
        }
        #expect(throws: SyncError.self) { try AttachmentAnnouncement(decoding: encoded + [0]) }
        var badBase = entry
        badBase.recordBase = "sync-0.0"
        #expect(throws: SyncError.self) { try AttachmentAnnouncement(decoding: AttachmentAnnouncement([badBase]).encoded) }
        var shortKey = entry
        shortKey.key = [1]
        #expect(throws: SyncError.self) { try AttachmentAnnouncement(decoding: AttachmentAnnouncement([shortKey]).encoded) }
    }
}
