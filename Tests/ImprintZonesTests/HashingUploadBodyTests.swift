import Foundation
import NIOCore
@testable import ImprintZones
import ImprintTestSupport
import Testing

/// The `uploadAsset` body hashes what it hands out, and names the asset only when it handed
/// out every byte exactly once.
@Suite("Hashing upload body")
struct HashingUploadBodyTests {
    static func drain(_ body: HashingUploadBody) async -> [UInt8] {
        var sent: [UInt8] = []
        for await piece in body { sent += Array(piece.readableBytesView) }
        return sent
    }

    @Test func piecesAreTheBytesAndTheirHashIsTheAsset() async throws {
        var rng = SplitMix64(seed: testSeed("hashingBody", fallback: 0x4a_5b_01))
        let piece = HashingUploadBody.pieceSize
        for size in [1, piece - 1, piece, piece + 1, 3 * piece + 17] {
            let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let body = HashingUploadBody(bytes)
            #expect(body.sentAsset() == nil)
            var pieces = 0
            var sent: [UInt8] = []
            for await buffer in body {
                #expect(buffer.readableBytes <= piece)
                sent += Array(buffer.readableBytesView)
                pieces += 1
            }
            #expect(sent == bytes)
            #expect(pieces == (size + piece - 1) / piece)
            #expect(body.sentAsset() == ZoneAsset(of: bytes))
        }
    }

    @Test func anEmptyBodyNeedNotBeIterated() async throws {
        let empty = HashingUploadBody([])
        #expect(empty.sentAsset() == ZoneAsset(of: [UInt8]()))
        #expect(await Self.drain(empty) == [])
        #expect(empty.sentAsset() == ZoneAsset(of: [UInt8]()))
    }

    @Test func aBodyStoppedEarlyOrSentTwiceNamesNoAsset() async throws {
        let bytes = [UInt8](repeating: 7, count: 2 * HashingUploadBody.pieceSize)
        let partial = HashingUploadBody(bytes)
        var iterator = partial.makeAsyncIterator()
        _ = await iterator.next()
        #expect(partial.sentAsset() == nil)

        let twice = HashingUploadBody(bytes)
        #expect(await Self.drain(twice) == bytes)
        #expect(await Self.drain(twice) == bytes)
        #expect(twice.sentAsset() == nil)
    }
}
