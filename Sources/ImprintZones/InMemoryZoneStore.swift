import Foundation

/// A zone store in memory, for tests of the layers above (the sync manager, the CLI).
///
/// Same guarantees as every ``ZoneStore``. Its change feed is a per-zone counter: each save or
/// delete of a record takes the next number, and a record changed again keeps only its newest
/// number, so a page lists each changed record once, in the order of its last change. A token
/// is `m1.<zone incarnation>.<number>`; one from another zone, another store instance, a
/// deleted-and-recreated zone or from beyond the counter is expired.
///
/// ```swift
/// let store = InMemoryZoneStore()
/// _ = try await store.createZone("doc_test")
/// ```
public actor InMemoryZoneStore: ZoneStore {
    private struct Zone {
        var info: ZoneInfo
        var incarnation: String
        var counter: Int64 = 0
        var records: [String: ZoneRecord] = [:]
        /// Record name by the number of its newest change.
        var feed: [Int64: String] = [:]
        var assets: [String: [UInt8]] = [:]
    }

    private var zones: [String: Zone] = [:]
    private var subscribers: [String: [UUID: AsyncThrowingStream<ZoneChangeNotification, any Error>.Continuation]] = [:]
    private let now: @Sendable () -> Date

    /// - Parameter now: the clock for `savedAt` and `createdAt`.
    public init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    public func createZone(_ zoneId: String, convoId: String?) throws -> ZoneInfo {
        try ZoneRules.checkZoneId(zoneId)
        guard zones[zoneId] == nil else { throw ZoneError(.zoneExists, zoneId) }
        let info = ZoneInfo(zoneId: zoneId, owner: nil, kind: ZoneInfo.kind(of: zoneId), createdAt: now())
        zones[zoneId] = Zone(info: info, incarnation: UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))
        return info
    }

    public func deleteZone(_ zoneId: String) throws {
        try ZoneRules.checkZoneId(zoneId)
        guard zones.removeValue(forKey: zoneId) != nil else { throw ZoneError(.zoneNotFound, zoneId) }
        notify(zoneId, token: nil)
    }

    public func uploadAsset(zoneId: String, bytes: [UInt8]) throws -> ZoneAsset {
        try ZoneRules.checkZoneId(zoneId)
        try ZoneRules.checkAssetBytes(bytes.count)
        guard zones[zoneId] != nil else { throw ZoneError(.zoneNotFound, zoneId) }
        let asset = ZoneAsset(of: bytes)
        if zones[zoneId]!.assets[asset.hash] == nil { zones[zoneId]!.assets[asset.hash] = bytes }
        return asset
    }

    public func fetchAsset(zoneId: String, hash: String) throws -> [UInt8] {
        let zone = try existing(zoneId)
        guard SHA256Hex.isValid(hash) else { throw ZoneError(.invalidArgument, "asset hash is not lowercase hex SHA-256") }
        guard let bytes = zone.assets[hash] else { throw ZoneError(.assetNotFound, hash) }
        return bytes
    }

    public func saveRecords(zoneId: String, _ drafts: [ZoneRecordDraft]) throws -> [ZoneRecord] {
        _ = try existing(zoneId)
        // Mutated in place (`modify`): a copy of the zone would copy every record per save.
        return try modify(zoneId) { zone in try save(drafts, into: &zone, zoneId: zoneId) }
    }

    private func save(_ drafts: [ZoneRecordDraft], into zone: inout Zone, zoneId: String) throws -> [ZoneRecord] {
        let results = try ZoneSavePlan.check(drafts, stored: { zone.records[$0] }, holdsAsset: { zone.assets[$0.hash]?.count == $0.size })
        let savedAt = now()
        var saved: [ZoneRecord] = []
        var changed = false
        for (draft, existing) in zip(drafts, results) {
            if let existing {
                saved.append(existing)
                continue
            }
            if case .inline(let bytes) = draft.asset, zone.assets[draft.asset.reference.hash] == nil {
                zone.assets[draft.asset.reference.hash] = bytes
            }
            zone.counter += 1
            let record = ZoneRecord(recordName: draft.recordName, recordType: draft.recordType, fields: draft.fields,
                                    asset: draft.asset.reference, changeToken: String(zone.counter), savedAt: savedAt)
            if let old = zone.records[draft.recordName] { zone.feed[Int64(old.changeToken)!] = nil }
            zone.records[draft.recordName] = record
            zone.feed[zone.counter] = draft.recordName
            saved.append(record)
            changed = true
        }
        if changed { notify(zoneId, token: token(zone)) }
        return saved
    }

    public func fetchChanges(zoneId: String, since: ZoneChangeToken?, limit: Int) throws -> ZoneChangeBatch {
        let zone = try existing(zoneId)
        try ZoneRules.checkLimit(limit)
        var start: Int64 = 0
        if let since {
            let parts = since.rawValue.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "m1", parts[1] == zone.incarnation,
                  let position = Int64(parts[2]), position >= 0, position <= zone.counter
            else { throw ZoneError(.changeTokenExpired, "token not from this zone") }
            start = position
        }
        let pending = zone.feed.keys.filter { $0 > start }.sorted()
        let page = pending.prefix(limit)
        let records = page.map { zone.records[zone.feed[$0]!]! }
        let end = page.last ?? (pending.isEmpty ? zone.counter : start)
        return ZoneChangeBatch(records: records, changeToken: ZoneChangeToken(rawValue: "m1.\(zone.incarnation).\(end)"),
                               moreComing: pending.count > page.count)
    }

    public func record(zoneId: String, named recordName: String) throws -> ZoneRecord {
        let zone = try existing(zoneId)
        try ZoneRules.checkRecordName(recordName)
        guard let record = zone.records[recordName], !record.deleted else { throw ZoneError(.recordNotFound, recordName: recordName) }
        return record
    }

    public func deleteRecords(zoneId: String, names: [String]) throws -> [String] {
        _ = try existing(zoneId)
        try ZoneRules.checkNames(names)
        return modify(zoneId) { zone in delete(names, in: &zone, zoneId: zoneId) }
    }

    private func delete(_ names: [String], in zone: inout Zone, zoneId: String) -> [String] {
        var deleted: [String] = []
        let savedAt = now()
        for name in names {
            guard var record = zone.records[name], !record.deleted else { continue }
            zone.feed[Int64(record.changeToken)!] = nil
            zone.counter += 1
            record.deleted = true
            record.savedAt = savedAt
            record.changeToken = String(zone.counter)
            zone.records[name] = record
            zone.feed[zone.counter] = name
            deleted.append(name)
        }
        if !deleted.isEmpty { notify(zoneId, token: token(zone)) }
        return deleted
    }

    public func subscribe(zoneId: String) throws -> AsyncThrowingStream<ZoneChangeNotification, any Error> {
        _ = try existing(zoneId)
        let (stream, continuation) = AsyncThrowingStream<ZoneChangeNotification, any Error>.makeStream()
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeSubscriber(zoneId, id) }
        }
        subscribers[zoneId, default: [:]][id] = continuation
        return stream
    }

    // MARK: Internals

    private func existing(_ zoneId: String) throws -> Zone {
        try ZoneRules.checkZoneId(zoneId)
        guard let zone = zones[zoneId] else { throw ZoneError(.zoneNotFound, zoneId) }
        return zone
    }

    /// Runs `body` on the stored zone in place (the zone must exist).
    private func modify<R>(_ zoneId: String, _ body: (inout Zone) throws -> R) rethrows -> R {
        try body(&zones[zoneId]!)
    }

    private func token(_ zone: Zone) -> ZoneChangeToken {
        ZoneChangeToken(rawValue: "m1.\(zone.incarnation).\(zone.counter)")
    }

    private func notify(_ zoneId: String, token: ZoneChangeToken?) {
        for continuation in subscribers[zoneId, default: [:]].values {
            continuation.yield(ZoneChangeNotification(zoneId: zoneId, changeToken: token))
        }
    }

    private func removeSubscriber(_ zoneId: String, _ id: UUID) {
        subscribers[zoneId]?[id] = nil
    }
}
