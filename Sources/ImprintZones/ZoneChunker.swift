import Crypto
import Foundation

/// Splits payloads of any size into chunk records of at most `chunkSize` bytes (1 MiB by
/// default, CloudKit's record size) and saves them to a zone.
///
/// Chunk `i` of a payload saved under `baseName` is the record `<baseName>.<i>`, whose asset
/// holds bytes `[i * chunkSize, (i + 1) * chunkSize)` of the payload and whose fields carry the
/// caller's routing fields plus `chunkIndex`, `chunkCount` and `payloadHash` (the SHA-256 of
/// the whole payload). An empty payload is one empty chunk.
///
/// Streaming: the payload is read one chunk at a time, each chunk's asset uploaded as soon as
/// it is full, and the payload hash computed on the way. Up to ``uploadsInFlight`` uploads
/// run at once (so one chunk's transfer overlaps the service's hashing and flushing of the
/// one before), and at most that many chunks plus the one being filled sit in memory, whatever
/// the payload's size. The records, which need the count and hash, are saved at the end, once
/// every upload was acknowledged, in one atomic batch per 1000 chunks; a payload is visible to
/// readers only when all its records are (or, past 1000 chunks, readers see it incomplete and wait:
/// ``ZoneError/Code/missingChunk``). Retrying an interrupted upload is safe: assets and
/// records are idempotent.
///
/// ```swift
/// let chunker = try ZoneChunker()
/// let manifest = try await chunker.upload(fileAt: "/tmp/video.mov", to: store, zoneId: zone,
///                                         baseName: "att-1", recordType: "attachment")
/// ```
public struct ZoneChunker: Sendable {
    /// Bytes per chunk.
    public let chunkSize: Int
    /// Chunk uploads in flight at once (1: one after another).
    public let uploadsInFlight: Int

    /// - Parameters:
    ///   - chunkSize: 1 ... ``ZoneLimits/maximumAssetBytes``; 1 MiB by default.
    ///   - uploadsInFlight: 1 ... 16 concurrent `uploadAsset` calls; 4 by default.
    public init(chunkSize: Int = 1 << 20, uploadsInFlight: Int = 4) throws {
        guard chunkSize >= 1, chunkSize <= ZoneLimits.maximumAssetBytes else {
            throw ZoneError(.invalidArgument, "chunk size must be 1...\(ZoneLimits.maximumAssetBytes)")
        }
        guard (1...16).contains(uploadsInFlight) else { throw ZoneError(.invalidArgument, "uploads in flight must be 1...16") }
        self.chunkSize = chunkSize
        self.uploadsInFlight = uploadsInFlight
    }

    /// The record name of chunk `index` of the payload saved under `baseName`.
    public static func recordName(baseName: String, index: Int) -> String { "\(baseName).\(index)" }

    /// The chunk records `upload` would save for `payload`, each beside the bytes of its asset,
    /// uploading nothing: for a caller that places one payload in several zones of a server
    /// and sends each asset there once (mailbox copies: the zone API's v1.4 `saveToInboxes`
    /// takes records whose assets the caller holds on that server).
    public func chunks(of payload: [UInt8], baseName: String, recordType: String,
                       fields: ZoneRecordFields = ZoneRecordFields()) throws -> [(draft: ZoneRecordDraft, bytes: ArraySlice<UInt8>)] {
        try ZoneRules.checkRecordName(Self.recordName(baseName: baseName, index: 999_999))
        let pieces = payload.isEmpty ? [payload[...]]
            : stride(from: 0, to: payload.count, by: chunkSize).map { payload[$0..<min(payload.count, $0 + chunkSize)] }
        guard pieces.count <= 1_000_000 else { throw ZoneError(.payloadTooLarge, "over 1000000 chunks") }
        let drafts = Self.drafts(assets: pieces.map { ZoneAsset(of: $0) }, payloadHash: SHA256Hex.digest(payload),
                                 baseName: baseName, recordType: recordType, fields: fields)
        return Array(zip(drafts, pieces))
    }

    /// Chunk `i`'s record for each of `assets`, in order.
    private static func drafts(assets: [ZoneAsset], payloadHash: String, baseName: String, recordType: String,
                               fields: ZoneRecordFields) -> [ZoneRecordDraft] {
        assets.enumerated().map { index, asset in
            var chunkFields = fields
            chunkFields.chunkIndex = index
            chunkFields.chunkCount = assets.count
            chunkFields.payloadHash = payloadHash
            return ZoneRecordDraft(recordName: recordName(baseName: baseName, index: index), recordType: recordType,
                                   fields: chunkFields, asset: .uploaded(asset))
        }
    }

    /// Uploads a payload held in memory.
    public func upload(_ payload: [UInt8], to store: some ZoneStore, zoneId: String, baseName: String,
                       recordType: String, fields: ZoneRecordFields = ZoneRecordFields()) async throws -> PayloadChunks {
        var offset = 0
        return try await upload(to: store, zoneId: zoneId, baseName: baseName, recordType: recordType, fields: fields) {
            guard offset < payload.count else { return nil }
            let end = min(payload.count, offset + chunkSize)
            defer { offset = end }
            return Array(payload[offset..<end])
        }
    }

    /// Uploads the file at `path`, read `chunkSize` bytes at a time.
    public func upload(fileAt path: String, to store: some ZoneStore, zoneId: String, baseName: String,
                       recordType: String, fields: ZoneRecordFields = ZoneRecordFields()) async throws -> PayloadChunks {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ZoneError(.io, "cannot open \(path)") }
        defer { try? handle.close() }
        return try await upload(from: handle, to: store, zoneId: zoneId, baseName: baseName, recordType: recordType, fields: fields)
    }

    /// Uploads what `handle` holds from its current offset to its end, `chunkSize` bytes at a time.
    public func upload(from handle: FileHandle, to store: some ZoneStore, zoneId: String, baseName: String,
                       recordType: String, fields: ZoneRecordFields = ZoneRecordFields()) async throws -> PayloadChunks {
        let size = chunkSize
        return try await upload(to: store, zoneId: zoneId, baseName: baseName, recordType: recordType, fields: fields) {
            do {
                guard let data = try handle.read(upToCount: size), !data.isEmpty else { return nil }
                return Array(data)
            } catch {
                throw ZoneError(.io, "read: \(error)")
            }
        }
    }

    /// Uploads a payload that arrives as a sequence of byte arrays of any sizes.
    public func upload<Bytes: AsyncSequence>(_ bytes: Bytes, to store: some ZoneStore, zoneId: String, baseName: String,
                                             recordType: String, fields: ZoneRecordFields = ZoneRecordFields()) async throws -> PayloadChunks
    where Bytes.Element == [UInt8] {
        var iterator = bytes.makeAsyncIterator()
        return try await upload(to: store, zoneId: zoneId, baseName: baseName, recordType: recordType, fields: fields) {
            try await iterator.next()
        }
    }

    /// The one upload loop: `next` hands out pieces of the payload (any sizes, nil at the end).
    private func upload(to store: some ZoneStore, zoneId: String, baseName: String, recordType: String, fields: ZoneRecordFields,
                        next: () async throws -> [UInt8]?) async throws -> PayloadChunks {
        try ZoneRules.checkRecordName(Self.recordName(baseName: baseName, index: 999_999))
        var hasher = SHA256()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(chunkSize)
        let assets = try await withThrowingTaskGroup(of: (Int, ZoneAsset).self) { uploads in
            var assets: [ZoneAsset?] = []
            var inFlight = 0
            func collect() async throws {
                guard let (index, asset) = try await uploads.next() else { return }
                assets[index] = asset
                inFlight -= 1
            }
            func flush() async throws {
                if inFlight == uploadsInFlight { try await collect() }
                hasher.update(data: buffer)
                let index = assets.count
                assets.append(nil)
                let chunk = buffer
                uploads.addTask { (index, try await store.uploadAsset(zoneId: zoneId, bytes: chunk)) }
                inFlight += 1
                buffer.removeAll(keepingCapacity: true)
            }
            while let piece = try await next() {
                var start = 0
                while start < piece.count {
                    let take = min(chunkSize - buffer.count, piece.count - start)
                    buffer.append(contentsOf: piece[start..<(start + take)])
                    start += take
                    if buffer.count == chunkSize { try await flush() }
                }
            }
            if !buffer.isEmpty || assets.isEmpty { try await flush() }
            while inFlight > 0 { try await collect() }
            return assets.map { $0! }
        }
        guard assets.count <= 1_000_000 else { throw ZoneError(.payloadTooLarge, "over 1000000 chunks") }
        let drafts = Self.drafts(assets: assets, payloadHash: SHA256Hex.hex(hasher.finalize()), baseName: baseName,
                                 recordType: recordType, fields: fields)
        var records: [ZoneRecord] = []
        var start = 0
        while start < drafts.count {
            let end = min(drafts.count, start + ZoneLimits.maximumBatchRecords)
            records += try await store.saveRecords(zoneId: zoneId, Array(drafts[start..<end]))
            start = end
        }
        return try PayloadChunks(records: records)
    }
}
