import Foundation
import ImprintDelivery
import ImprintServer

/// `saveToInboxes` after validation: records for several inbox zones, saved by one store call
/// in one transaction (`ZoneServiceStore.saveToInboxes`). Inline bytes that several records
/// carry are one `StagedAsset`, staged once per request, so the store places each distinct
/// payload once.
struct InboxFanOut: Sendable {
    struct Inbox: Sendable {
        var zone: ZoneID
        var records: [RecordSave]
        /// SHA-256 hex of the inbox write capability presented for this inbox, if any.
        var capabilityHash: String?
    }

    var writer: String
    var inboxes: [Inbox]
    var quota: Int
    var now: Date

    var zoneIds: [String] { inboxes.map(\.zone.raw) }
    /// Every record name of the fan-out, each once.
    var recordNames: [String] { Array(Set(inboxes.flatMap { $0.records.map(\.name) })).sorted() }
    /// Each distinct staged inline payload once, by hash.
    var staged: [StagedAsset] {
        var seen = Set<String>()
        return inboxes.flatMap { $0.records.compactMap(\.inline) }.filter { seen.insert($0.hash).inserted }.sorted { $0.hash < $1.hash }
    }
    /// The hashes of uploaded assets (not inline) the records reference, each once.
    var uploadedHashes: [String] { Array(Set(inboxes.flatMap { $0.records.compactMap(\.asset?.hash) })).sorted() }
    /// The inboxes that presented a capability: zone ids and hashes, in step.
    var capabilities: (zoneIds: [String], hashes: [String]) {
        let presented = inboxes.compactMap { inbox in inbox.capabilityHash.map { (inbox.zone.raw, $0) } }
        return (presented.map(\.0), presented.map(\.1))
    }

    func discardStaged() {
        for staged in staged { staged.discard() }
    }
}

/// What a backend reads, in a few set-based queries, to decide every inbox of a fan-out.
struct InboxFacts: Sendable {
    /// The inbox zones that exist, by id.
    var zones: [String: ZoneRow] = [:]
    /// Owners the writer shares at least one convo with as active members.
    var coMembers: Set<String> = []
    /// Zones whose presented capability hash is one their owner registered.
    var capable: Set<String> = []
    /// Stored rows (live or tombstones) of the fan-out's record names, by zone then name.
    var existing: [String: [String: RecordRow]] = [:]
    /// Each owner's bytes over all its zones.
    var ownerBytes: [String: Int] = [:]
    /// Sizes of uploaded assets by zone then hash: pending uploads, else live records' assets.
    var uploaded: [String: [String: Int]] = [:]
    /// Sizes of assets the writer holds on this server, by hash (v1.4): ones it uploaded to any
    /// zone (pending) or that a live record it saved references. It had the bytes, so it may
    /// reference them in any inbox without sending them again.
    var possessed: [String: Int] = [:]

    /// Whether an inbox record of `zoneId` may reference `asset`.
    func admits(_ asset: ZoneAssetRef, in zoneId: String) -> Bool {
        uploaded[zoneId]?[asset.hash] == asset.size || possessed[asset.hash] == asset.size
    }
}

/// One record a fan-out writes, its change number drawn from its zone.
struct InboxRecordWrite: Sendable {
    var zoneId: String
    var save: RecordSave
    var asset: ZoneAssetRef?
    var change: Int64
}

/// A fan-out decided: each inbox's outcome, in order, and what the accepted ones write.
struct InboxPlan: Sendable {
    var outcomes: [Result<[ZoneRecord], DeliveryError>] = []
    var writes: [InboxRecordWrite] = []
    /// Per zone written: its new last change, records and bytes added.
    var zoneUpdates: [(zoneId: String, lastChange: Int64, records: Int, bytes: Int)] = []
    /// Inline payloads some accepted write references.
    var usedInline: [StagedAsset] = []

    var writtenZones: [String] { zoneUpdates.map(\.zoneId) }
}

extension InboxFanOut {
    /// Decides every inbox on `facts` with `saveRecords`' rules (the zone exists, the writer
    /// may append, a name already live with another hash is `RecordExists` and with the same
    /// hash an unchanged retry, an uploaded asset must be there with its size or be one the
    /// writer holds on this server (`InboxFacts.possessed`), the owner's
    /// quota): refused with its own error, or accepted with its records numbered after its
    /// zone's last change. One inbox's refusal changes nothing for the others.
    func plan(_ facts: InboxFacts) -> InboxPlan {
        var plan = InboxPlan()
        var used = Set<String>()
        for inbox in inboxes {
            do {
                guard let zone = facts.zones[inbox.zone.raw] else { throw DeliveryError.zoneNotFound(inbox.zone.raw) }
                let mayAppend = facts.capable.contains(zone.zoneId) || facts.coMembers.contains(zone.owner)
                try ZoneRules.check(.write, zone: zone, caller: writer, rosterAnswer: mayAppend)
                var decisions: [ZoneRules.SaveDecision] = []
                var writes: [RecordSave] = []
                for save in inbox.records {
                    let decision = try ZoneRules.decide(save, existing: facts.existing[zone.zoneId]?[save.name])
                    decisions.append(decision)
                    guard case .write = decision else { continue }
                    if let asset = save.asset, !facts.admits(asset, in: zone.zoneId) {
                        throw DeliveryError.invalidRequest("asset \(asset.hash) of \(save.name) was not uploaded to this zone, or by the caller, with that size")
                    }
                    writes.append(save)
                }
                let added = ZoneRules.added(writes)
                if added.bytes > 0, (facts.ownerBytes[zone.owner] ?? 0) + added.bytes > quota {
                    throw DeliveryError.quotaExceeded(quota: quota)
                }
                var change = zone.lastChange
                var records: [ZoneRecord] = []
                for (save, decision) in zip(inbox.records, decisions) {
                    if case .unchanged(let row) = decision {
                        records.append(row.record(incarnation: zone.incarnation))
                        continue
                    }
                    change += 1
                    let asset = save.asset ?? save.inline.map { ZoneAssetRef(hash: $0.hash, size: $0.size) }
                    if let inline = save.inline, used.insert(inline.hash).inserted { plan.usedInline.append(inline) }
                    plan.writes.append(InboxRecordWrite(zoneId: zone.zoneId, save: save, asset: asset, change: change))
                    records.append(ZoneRecord(
                        recordName: save.name, recordType: save.type, fields: save.fields, asset: asset,
                        changeToken: ChangeToken(incarnation: zone.incarnation, change: change).text, savedAt: now, deleted: false))
                }
                if !writes.isEmpty {
                    plan.zoneUpdates.append((zone.zoneId, change, added.records, added.bytes))
                }
                plan.outcomes.append(.success(records))
            } catch let error as DeliveryError {
                plan.outcomes.append(.failure(error))
            } catch {
                plan.outcomes.append(.failure(DeliveryError.internalError()))
            }
        }
        return plan
    }
}
