import Foundation
import ImprintZones

/// A zone store in front of a real one that answers for the records of one payload with the
/// records of another, as a hostile zone service could (it holds every record and chooses
/// what to answer): `swap(from:to:)` makes `<from>.<i>` come back as `<to>.<i>`'s record under
/// the asked name. Everything else goes to the real store.
final class SwappingZoneStore: ZoneStore, @unchecked Sendable {
    let base: any ZoneStore
    private let lock = NSLock()
    private var swaps: [String: String] = [:]

    init(_ base: any ZoneStore) { self.base = base }

    func swap(from: String, to: String) { lock.withLock { swaps[from + "."] = to + "." } }

    func createZone(_ zoneId: String, convoId: String?) async throws -> ZoneInfo { try await base.createZone(zoneId, convoId: convoId) }
    func deleteZone(_ zoneId: String) async throws { try await base.deleteZone(zoneId) }
    func uploadAsset(zoneId: String, bytes: [UInt8]) async throws -> ZoneAsset { try await base.uploadAsset(zoneId: zoneId, bytes: bytes) }
    func fetchAsset(zoneId: String, hash: String) async throws -> [UInt8] { try await base.fetchAsset(zoneId: zoneId, hash: hash) }
    func saveRecords(zoneId: String, _ records: [ZoneRecordDraft]) async throws -> [ZoneRecord] { try await base.saveRecords(zoneId: zoneId, records) }
    func fetchChanges(zoneId: String, since: ZoneChangeToken?, limit: Int) async throws -> ZoneChangeBatch {
        try await base.fetchChanges(zoneId: zoneId, since: since, limit: limit)
    }
    func record(zoneId: String, named recordName: String) async throws -> ZoneRecord {
        let swap = lock.withLock { swaps.first { recordName.hasPrefix($0.key) } }
        guard let swap else { return try await base.record(zoneId: zoneId, named: recordName) }
        var record = try await base.record(zoneId: zoneId, named: swap.value + recordName.dropFirst(swap.key.count))
        record.recordName = recordName
        return record
    }
    func deleteRecords(zoneId: String, names: [String]) async throws -> [String] { try await base.deleteRecords(zoneId: zoneId, names: names) }
    func subscribe(zoneId: String) async throws -> AsyncThrowingStream<ZoneChangeNotification, any Error> { try await base.subscribe(zoneId: zoneId) }
}
