import Foundation
import ImprintZones

/// A zone store in front of a real one whose saves into chosen zones fail as an unreachable
/// server would (a transport error), until `recover`. Everything else goes to the real store.
final class FailingInboxZoneStore: ZoneStore, @unchecked Sendable {
    let base: any ZoneStore
    private let lock = NSLock()
    private var failing: Set<String>
    private(set) var refused = 0

    init(_ base: any ZoneStore, failing zones: Set<String>) {
        self.base = base
        self.failing = zones
    }

    func recover() { lock.withLock { failing.removeAll() } }

    private func check(_ zoneId: String) throws {
        try lock.withLock {
            if failing.contains(zoneId) {
                refused += 1
                throw ZoneError(.transport, "the test made \(zoneId) unreachable")
            }
        }
    }

    func createZone(_ zoneId: String, convoId: String?) async throws -> ZoneInfo { try await base.createZone(zoneId, convoId: convoId) }
    func deleteZone(_ zoneId: String) async throws { try await base.deleteZone(zoneId) }
    func uploadAsset(zoneId: String, bytes: [UInt8]) async throws -> ZoneAsset {
        try check(zoneId)
        return try await base.uploadAsset(zoneId: zoneId, bytes: bytes)
    }
    func fetchAsset(zoneId: String, hash: String) async throws -> [UInt8] { try await base.fetchAsset(zoneId: zoneId, hash: hash) }
    func saveRecords(zoneId: String, _ records: [ZoneRecordDraft]) async throws -> [ZoneRecord] {
        try check(zoneId)
        return try await base.saveRecords(zoneId: zoneId, records)
    }
    func fetchChanges(zoneId: String, since: ZoneChangeToken?, limit: Int) async throws -> ZoneChangeBatch {
        try await base.fetchChanges(zoneId: zoneId, since: since, limit: limit)
    }
    func record(zoneId: String, named recordName: String) async throws -> ZoneRecord { try await base.record(zoneId: zoneId, named: recordName) }
    func deleteRecords(zoneId: String, names: [String]) async throws -> [String] { try await base.deleteRecords(zoneId: zoneId, names: names) }
    func subscribe(zoneId: String) async throws -> AsyncThrowingStream<ZoneChangeNotification, any Error> { try await base.subscribe(zoneId: zoneId) }
}
