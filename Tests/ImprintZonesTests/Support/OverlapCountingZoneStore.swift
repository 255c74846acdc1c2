import Foundation
@testable import ImprintZones

/// A zone store in front of a real one that counts how many `uploadAsset` calls overlap. The
/// first `barrier` uploads wait until that many have started (so a client that keeps that
/// many in flight is seen doing so, whatever the scheduling); upload `i` then yields
/// `yields[i % yields.count]` times before going on, so they finish out of order.
actor OverlapCountingZoneStore: ZoneStore {
    let base: any ZoneStore
    let barrier: Int
    let yields: [Int]
    private(set) var mostInFlight = 0
    /// Uploads answered when the first `saveRecords` came.
    private(set) var uploadsAnsweredBeforeSave: Int?
    private var inFlight = 0
    private var started = 0
    private var answered = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ base: any ZoneStore, barrier: Int, yields: [Int]) {
        self.base = base
        self.barrier = barrier
        self.yields = yields.isEmpty ? [0] : yields
    }

    func uploadAsset(zoneId: String, bytes: [UInt8]) async throws -> ZoneAsset {
        let index = started
        started += 1
        inFlight += 1
        mostInFlight = max(mostInFlight, inFlight)
        if index < barrier {
            if started < barrier {
                await withCheckedContinuation { waiting.append($0) }
            } else {
                for continuation in waiting { continuation.resume() }
                waiting = []
            }
        }
        for _ in 0..<yields[index % yields.count] { await Task.yield() }
        let asset = try await base.uploadAsset(zoneId: zoneId, bytes: bytes)
        inFlight -= 1
        answered += 1
        return asset
    }

    func saveRecords(zoneId: String, _ records: [ZoneRecordDraft]) async throws -> [ZoneRecord] {
        if uploadsAnsweredBeforeSave == nil { uploadsAnsweredBeforeSave = answered }
        return try await base.saveRecords(zoneId: zoneId, records)
    }

    func createZone(_ zoneId: String, convoId: String?) async throws -> ZoneInfo { try await base.createZone(zoneId, convoId: convoId) }
    func deleteZone(_ zoneId: String) async throws { try await base.deleteZone(zoneId) }
    func fetchAsset(zoneId: String, hash: String) async throws -> [UInt8] { try await base.fetchAsset(zoneId: zoneId, hash: hash) }
    func fetchChanges(zoneId: String, since: ZoneChangeToken?, limit: Int) async throws -> ZoneChangeBatch {
        try await base.fetchChanges(zoneId: zoneId, since: since, limit: limit)
    }
    func record(zoneId: String, named recordName: String) async throws -> ZoneRecord { try await base.record(zoneId: zoneId, named: recordName) }
    func deleteRecords(zoneId: String, names: [String]) async throws -> [String] { try await base.deleteRecords(zoneId: zoneId, names: names) }
    func subscribe(zoneId: String) async throws -> AsyncThrowingStream<ZoneChangeNotification, any Error> { try await base.subscribe(zoneId: zoneId) }
}
