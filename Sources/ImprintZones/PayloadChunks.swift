import Crypto
import Foundation

/// The chunk records of one payload, checked complete and consistent, in order; and the
/// reading of the payload back from a store.
///
/// `init(records:)` takes the records of one payload (from the change feed, in any order,
/// repeats allowed) and throws, naming the record and chunk, when a chunk is missing
/// (``ZoneError/Code/missingChunk``), two records claim one chunk
/// (``ZoneError/Code/duplicateChunk``), or a chunk's count, hash or size disagrees with the
/// others (``ZoneError/Code/inconsistentChunk``). Reading fetches one chunk at a time, checks
/// each asset's bytes against its hash (``ZoneError/Code/assetCorrupt`` naming the chunk) and
/// the whole against `payloadHash` (``ZoneError/Code/payloadHashMismatch``), so an altered
/// chunk is always caught, and never holds more than one chunk in memory (except
/// ``assemble(from:zoneId:)``, which returns the whole payload).
///
/// ```swift
/// let page = try await store.fetchChanges(zoneId: zone, since: token)
/// for (_, records) in PayloadChunks.group(page.records) {
///     guard let chunks = try? PayloadChunks(records: records) else { continue } // not all here yet
///     let payload = try await chunks.assemble(from: store, zoneId: zone)
/// }
/// ```
public struct PayloadChunks: Sendable, Hashable {
    /// SHA-256 of the whole payload (lowercase hex).
    public let payloadHash: String
    /// The chunk records, chunk 0 first.
    public let records: [ZoneRecord]

    /// The payload's size in bytes.
    public var size: Int { records.reduce(0) { $0 + $1.asset.size } }

    public init(records input: [ZoneRecord]) throws {
        guard let first = input.first else { throw ZoneError(.missingChunk, "no chunk records", chunkIndex: 0) }
        guard let hash = first.fields.payloadHash, let count = first.fields.chunkCount, count >= 1 else {
            throw ZoneError(.inconsistentChunk, "not a chunk record (no payloadHash or chunkCount)", recordName: first.recordName)
        }
        var byIndex: [Int: ZoneRecord] = [:]
        for record in input {
            guard let index = record.fields.chunkIndex, record.fields.payloadHash == hash, record.fields.chunkCount == count,
                  index >= 0, index < count else {
                throw ZoneError(.inconsistentChunk, "chunk fields disagree with payload \(hash) of \(count) chunks",
                                recordName: record.recordName, chunkIndex: record.fields.chunkIndex)
            }
            if record.deleted { continue }
            if let other = byIndex[index] {
                if other.recordName == record.recordName && other.asset == record.asset { continue } // the feed repeated it
                throw ZoneError(.duplicateChunk, "records \(other.recordName) and \(record.recordName) both claim it",
                                recordName: record.recordName, chunkIndex: index)
            }
            byIndex[index] = record
        }
        var ordered: [ZoneRecord] = [] // grows only with chunks present: a hostile count costs no memory
        for index in 0..<count {
            guard let record = byIndex[index] else {
                throw ZoneError(.missingChunk, "payload \(hash) has no live chunk \(index) of \(count)", chunkIndex: index)
            }
            ordered.append(record)
        }
        // Every chunk but the last is full; the last is no larger and empty only when it is the only one.
        let full = ordered[0].asset.size
        for (index, record) in ordered.enumerated() {
            let ok = index == count - 1 ? (record.asset.size <= full && (record.asset.size > 0 || count == 1)) : record.asset.size == full
            guard ok, count == 1 || full > 0 else {
                throw ZoneError(.inconsistentChunk, "chunk of \(record.asset.size) bytes in a payload of \(full)-byte chunks",
                                recordName: record.recordName, chunkIndex: index)
            }
        }
        payloadHash = hash
        records = ordered
    }

    /// Groups chunk records of a change-feed page by payload (records without `payloadHash`
    /// are left out); pass each group to `init(records:)`.
    public static func group(_ records: [ZoneRecord]) -> [String: [ZoneRecord]] {
        Dictionary(grouping: records.filter { $0.fields.payloadHash != nil }, by: { $0.fields.payloadHash! })
    }

    /// The chunks' bytes in order, each checked, the whole checked at the end (the sequence
    /// throws ``ZoneError/Code/payloadHashMismatch`` instead of finishing if it does not match).
    public func chunks(from store: some ZoneStore, zoneId: String) -> AsyncThrowingStream<[UInt8], any Error> {
        let records = records
        let payloadHash = payloadHash
        return AsyncThrowingStream(unfolding: { [index = Counter()] in
            let i = index.value
            guard i <= records.count else { return nil }
            index.value += 1
            if i == records.count {
                guard SHA256Hex.hex(index.hasher.finalize()) == payloadHash else {
                    throw ZoneError(.payloadHashMismatch, "reassembled payload does not hash to \(payloadHash)")
                }
                return nil
            }
            let record = records[i]
            let bytes: [UInt8]
            do {
                bytes = try await store.fetchAsset(zoneId: zoneId, hash: record.asset.hash)
            } catch let error as ZoneError {
                throw ZoneError(error.code, error.context, recordName: record.recordName, chunkIndex: i, httpStatus: error.httpStatus)
            }
            guard bytes.count == record.asset.size else {
                throw ZoneError(.assetCorrupt, "\(bytes.count) bytes, record says \(record.asset.size)", recordName: record.recordName, chunkIndex: i)
            }
            index.hasher.update(data: bytes)
            return bytes
        })
    }

    /// Writes the payload to `handle` chunk by chunk; throws (after writing) if it does not hash
    /// to `payloadHash`, so write to a temporary file and keep it only on success.
    public func write(from store: some ZoneStore, zoneId: String, to handle: FileHandle) async throws {
        for try await chunk in chunks(from: store, zoneId: zoneId) {
            do {
                try handle.write(contentsOf: chunk)
            } catch {
                throw ZoneError(.io, "write: \(error)")
            }
        }
    }

    /// The whole payload in memory (for payloads known to be small).
    public func assemble(from store: some ZoneStore, zoneId: String) async throws -> [UInt8] {
        var payload: [UInt8] = []
        payload.reserveCapacity(size)
        for try await chunk in chunks(from: store, zoneId: zoneId) { payload += chunk }
        return payload
    }

    /// The state of `chunks(from:zoneId:)`'s unfolding closure (the closure itself is Sendable).
    private final class Counter: @unchecked Sendable {
        var value = 0
        var hasher = SHA256()
    }
}
