import Foundation
import ImprintZones

/// A zone store in front of a real one that hides chosen records from its reader, as a
/// delivery path that loses, delays or reorders records would: `withhold` makes a message's
/// chunks invisible (not found) until `release`. Everything else goes to the real store.
final class WithholdingZoneStore: ZoneStore, @unchecked Sendable {
    let base: any ZoneStore
    private let lock = NSLock()
    private var hidden: Set<String> = []
    private var hiddenAssets: Set<String> = []

    init(_ base: any ZoneStore) { self.base = base }

    /// Hides every record whose name starts with `prefix` (e.g. `<convo>-<seq>.`).
    func withhold(_ prefix: String) { lock.withLock { _ = hidden.insert(prefix) } }
    func release(_ prefix: String) { lock.withLock { _ = hidden.remove(prefix) } }
    func isHidden(_ name: String) -> Bool { lock.withLock { hidden.contains { name.hasPrefix($0) } } }

    /// Hides message `seq` of `convoId`: its chunk records and their assets.
    func withhold(convoId: String, seq: Int) async throws {
        let prefix = "\(convoId)-\(seq)."
        let first = try await base.record(zoneId: "doc_\(convoId)", named: prefix + "0")
        lock.withLock {
            _ = hidden.insert(prefix)
            _ = hiddenAssets.insert(first.asset.hash)
        }
    }

    func release(convoId: String, seq: Int) {
        lock.withLock {
            _ = hidden.remove("\(convoId)-\(seq).")
            hiddenAssets.removeAll()
        }
    }

    func createZone(_ zoneId: String, convoId: String?) async throws -> ZoneInfo { try await base.createZone(zoneId, convoId: convoId) }
    func deleteZone(_ zoneId: String) async throws { try await base.deleteZone(zoneId) }
    func uploadAsset(zoneId: String, bytes: [UInt8]) async throws -> ZoneAsset { try await base.uploadAsset(zoneId: zoneId, bytes: bytes) }
    func fetchAsset(zoneId: String, hash: String) async throws -> [UInt8] {
        if lock.withLock({ hiddenAssets.contains(hash) }) { throw ZoneError(.assetNotFound, "withheld by the test: \(hash)") }
        return try await base.fetchAsset(zoneId: zoneId, hash: hash)
    }
    func saveRecords(zoneId: String, _ records: [ZoneRecordDraft]) async throws -> [ZoneRecord] { try await base.saveRecords(zoneId: zoneId, records) }
    func fetchChanges(zoneId: String, since: ZoneChangeToken?, limit: Int) async throws -> ZoneChangeBatch {
        var batch = try await base.fetchChanges(zoneId: zoneId, since: since, limit: limit)
        batch.records.removeAll { isHidden($0.recordName) }
        return batch
    }
    func record(zoneId: String, named recordName: String) async throws -> ZoneRecord {
        if isHidden(recordName) { throw ZoneError(.recordNotFound, "withheld by the test: \(recordName)") }
        return try await base.record(zoneId: zoneId, named: recordName)
    }
    func deleteRecords(zoneId: String, names: [String]) async throws -> [String] { try await base.deleteRecords(zoneId: zoneId, names: names) }
    func subscribe(zoneId: String) async throws -> AsyncThrowingStream<ZoneChangeNotification, any Error> { try await base.subscribe(zoneId: zoneId) }
}
