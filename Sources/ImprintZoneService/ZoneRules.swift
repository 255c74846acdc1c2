import Foundation
import ImprintDelivery
import ImprintServer

/// A zone's row, as both backends read it.
struct ZoneRow: Sendable {
    var zoneId: String
    var kind: ZoneID.Kind
    var owner: String
    var convoId: String?
    var incarnation: String
    var lastChange: Int64
    var purgedThrough: Int64
    var createdAt: Date

    var view: ZoneView { ZoneView(zoneId: zoneId, owner: owner, kind: kind.rawValue, createdAt: createdAt) }
    var token: ChangeToken { ChangeToken(incarnation: incarnation, change: lastChange) }
}

/// A stored record row, as both backends read it.
struct RecordRow: Sendable {
    var name: String
    var type: String
    var fieldsJSON: String
    var assetHash: String?
    var assetSize: Int?
    var savedBy: String?
    var change: Int64
    var savedAt: Date
    var deleted: Bool
    var expiresAt: Date?
    var commentKeyHash: String?

    func record(incarnation: String) -> ZoneRecord {
        let fields = (try? WireJSON.decoder().decode([String: JSONValue].self, from: Data(fieldsJSON.utf8))) ?? [:]
        return ZoneRecord(
            recordName: name, recordType: type, fields: deleted ? [:] : fields,
            asset: deleted ? nil : assetHash.map { ZoneAssetRef(hash: $0, size: assetSize ?? 0) },
            changeToken: ChangeToken(incarnation: incarnation, change: change).text, savedAt: savedAt, deleted: deleted)
    }
}

/// The zone API's access rules, decided on facts each backend reads inside its transaction.
/// A rule that needs the Delivery Service roster names it (`RosterQuestion`); the backend
/// answers it from the same database, so access follows the roster at that moment.
enum ZoneRules {
    enum Access {
        /// fetchChanges, getRecord, getAsset, subscribeZone.
        case read
        /// saveRecords, uploadAsset.
        case write
        /// deleteRecords: shared zones let members in (then only for their own records).
        case deleteRecords
    }

    /// What the roster must say for `caller` to pass.
    enum RosterQuestion: Equatable {
        /// Is `did` an active member of `convoId`?
        case activeMember(convoId: String, did: String)
        /// May `did` append to `owner`'s inbox `zoneId`? Yes when the request presented a write
        /// capability the owner registered for that inbox (`capabilityHash`, the SHA-256 hex
        /// of the presented value: a sender whose group lives on another server), or when
        /// `did` and `owner` share at least one convo as active members on this server.
        case inboxWriter(did: String, owner: String, zoneId: String, capabilityHash: String?)
    }

    /// nil when the answer follows from the zone row alone (then `check` needs no roster fact).
    /// `inboxCapability` is the hash of the write capability the request presented, if any.
    static func rosterQuestion(_ access: Access, zone: ZoneRow, caller: String, inboxCapability: String? = nil) -> RosterQuestion? {
        switch zone.kind {
        case .shared:
            return .activeMember(convoId: zone.convoId ?? "", did: caller)
        case .inbox:
            guard access == .write, caller != zone.owner else { return nil }
            return .inboxWriter(did: caller, owner: zone.owner, zoneId: zone.zoneId, capabilityHash: inboxCapability)
        case .snapshot:
            return nil
        }
    }

    /// Throws the contract's 403 unless `caller` may act; `rosterAnswer` answers `rosterQuestion`.
    static func check(_ access: Access, zone: ZoneRow, caller: String, rosterAnswer: Bool) throws {
        switch zone.kind {
        case .shared:
            guard rosterAnswer else { throw DeliveryError.notMember(zone.convoId ?? "") }
        case .inbox:
            if caller == zone.owner { return }
            guard access == .write, rosterAnswer else {
                throw DeliveryError.forbidden(access == .write
                    ? "caller shares no convo with the inbox's owner and presented no write capability it registered"
                    : "only the owner reads an inbox")
            }
        case .snapshot:
            guard caller == zone.owner else { throw DeliveryError.forbidden("only the owner uses a snapshot zone") }
        }
    }

    /// `createZone`'s rules: who may create `zone`. `convoMember` answers "is caller an active
    /// member of the zone's convo" (nil: no such convo).
    static func checkCreate(_ zone: ZoneID, caller: String, convoMember: Bool?) throws {
        switch zone.kind {
        case .shared:
            guard let convoMember else { throw DeliveryError.convoNotFound(zone.subject) }
            guard convoMember else { throw DeliveryError.notMember(zone.subject) }
        case .inbox:
            guard zone.subject == caller else { throw DeliveryError.forbidden("only \(zone.subject) creates its inbox") }
        case .snapshot:
            break
        }
    }

    /// `putInboxCapability`'s rules: only an inbox's owner hands out write capabilities to it.
    static func checkPutInboxCapability(_ zone: ZoneRow, caller: String) throws {
        guard zone.kind == .inbox else { throw DeliveryError.invalidRequest("\(zone.zoneId) is not an inbox zone") }
        guard caller == zone.owner else { throw DeliveryError.forbidden("only \(zone.owner) hands out write capabilities to its inbox") }
    }

    /// `deleteZone`'s rules. For a shared zone, `creatorOfEmptyConvo` says whether caller
    /// created the convo and it has no active members left.
    static func checkDeleteZone(_ zone: ZoneRow, caller: String, creatorOfEmptyConvo: Bool) throws {
        switch zone.kind {
        case .shared:
            guard creatorOfEmptyConvo else {
                throw DeliveryError.forbidden("only the convo's creator deletes a shared zone, once the convo has no active members")
            }
        case .inbox, .snapshot:
            guard caller == zone.owner else { throw DeliveryError.forbidden("only the owner deletes this zone") }
        }
    }

    /// What a save does with one record, given the stored row of that name.
    enum SaveDecision {
        /// Same name and asset hash as a live record: the retry of a save; answer with it.
        case unchanged(RecordRow)
        case write
    }

    static func decide(_ save: RecordSave, existing: RecordRow?) throws -> SaveDecision {
        guard let existing, !existing.deleted else { return .write }
        let hash = save.asset?.hash ?? save.inline?.hash
        guard existing.assetHash == hash else { throw DeliveryError.recordExists(save.name) }
        return .unchanged(existing)
    }

    /// Whether `change`/`commit` record `save` in a shared zone matches the Delivery Service's
    /// message (`sender`, `hash`) of its `(convo, seq)`: the caller sent it, and it is its payload.
    static func needsMessageCheck(_ save: RecordSave, zone: ZoneRow) -> Bool {
        zone.kind == .shared && (save.type == "change" || save.type == "commit")
    }

    static func messageKey(_ save: RecordSave, zone: ZoneRow) throws -> (convoId: String, seq: Int64, payloadHash: String) {
        guard let seq = save.routing.seq, let payloadHash = save.routing.payloadHash else {
            throw DeliveryError.invalidRequest("\(save.type) record \(save.name) needs fields.seq and fields.payloadHash")
        }
        let convoId = zone.convoId ?? ""
        if let given = save.routing.convoId, given != convoId {
            throw DeliveryError.invalidRequest("fields.convoId of \(save.name) is not the zone's convo")
        }
        return (convoId, seq, payloadHash)
    }

    static func checkMessage(_ save: RecordSave, caller: String, payloadHash: String, message: (sender: String, hash: String)?) throws {
        guard let message, message.sender == caller, message.hash == payloadHash else {
            throw DeliveryError.forbidden(
                "record \(save.name): the Delivery Service holds no message with its seq sent by the caller with its payloadHash")
        }
    }

    /// Bytes and records a batch's writes add to the zone (writes only replace tombstones or nothing).
    static func added(_ saves: [RecordSave]) -> (records: Int, bytes: Int) {
        (saves.count, saves.reduce(0) { $0 + ($1.asset?.size ?? $1.inline?.size ?? 0) })
    }

    /// A snapshot record readable by capability: live and not expired; else 410 `Gone`.
    static func checkSnapshotCapability(_ row: RecordRow?, now: Date) throws -> RecordRow {
        guard let row, row.type == "snapshot" else { throw DeliveryError.recordNotFound("(capability)") }
        guard !row.deleted else { throw DeliveryError.gone("snapshot deleted") }
        if let expiresAt = row.expiresAt, expiresAt <= now { throw DeliveryError.gone("snapshot expired") }
        return row
    }

    static func newIncarnation() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(format: "%016llx", generator.next() as UInt64)
    }
}

/// Keys of the zone service on the shared `EventBell`: never a DID (those start with `did:`).
enum ZoneEvents {
    static func key(_ zoneId: String) -> String { "zone:" + zoneId }
}
