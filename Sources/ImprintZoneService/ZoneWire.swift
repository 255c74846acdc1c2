import Foundation
import ImprintDelivery

// The zone service's wire types (the zone API contract, `app.imprint.zone.*`): what the
// server decodes and encodes, and what a client needs to speak to it. Kept in this one file
// so that the client module's copy can be reconciled with it.

/// The NSIDs of the zone API; each is also the `lxm` claim of a token for that method.
public enum ZoneMethod: String, CaseIterable, Sendable {
    case createZone, deleteZone, uploadAsset, saveRecords, fetchChanges, getRecord, getAsset, deleteRecords
    case subscribeZone, getUsage
    /// v1.1: epoch-tied compaction of a shared zone, now.
    case compactZone
    /// v1.1: records for several inbox zones in one request (mailbox fan-out).
    case saveToInboxes
    /// v1.2: an inbox's owner registers or withdraws a write capability for it.
    case putInboxCapability

    public static let namespace = "app.imprint.zone"

    public var nsid: String { "\(Self.namespace).\(rawValue)" }
    public var path: String { "/xrpc/\(nsid)" }

    /// Queries are `GET`, procedures are `POST`.
    public var isProcedure: Bool {
        switch self {
        case .createZone, .deleteZone, .uploadAsset, .saveRecords, .deleteRecords, .compactZone, .saveToInboxes, .putInboxCapability: true
        case .fetchChanges, .getRecord, .getAsset, .subscribeZone, .getUsage: false
        }
    }
}

/// A zone as `createZone` returns it.
public struct ZoneView: Codable, Sendable, Equatable {
    public var zoneId: String
    public var owner: String
    /// `shared`, `inbox` or `snapshot` (from the zone id's prefix).
    public var kind: String
    public var createdAt: Date

    public init(zoneId: String, owner: String, kind: String, createdAt: Date) {
        self.zoneId = zoneId
        self.owner = owner
        self.kind = kind
        self.createdAt = createdAt
    }
}

/// An asset reference: the SHA-256 (lowercase hex) and length of ciphertext bytes.
public struct ZoneAssetRef: Codable, Sendable, Hashable {
    public var hash: String
    public var size: Int

    public init(hash: String, size: Int) {
        self.hash = hash
        self.size = size
    }
}

/// A stored record, or a tombstone (`deleted`, no asset) in a change feed.
public struct ZoneRecord: Codable, Sendable, Equatable {
    public var recordName: String
    public var recordType: String
    public var fields: [String: JSONValue]
    public var asset: ZoneAssetRef?
    /// The change that last wrote this record (a change token).
    public var changeToken: String
    public var savedAt: Date
    public var deleted: Bool

    public init(
        recordName: String, recordType: String, fields: [String: JSONValue], asset: ZoneAssetRef?, changeToken: String,
        savedAt: Date, deleted: Bool
    ) {
        self.recordName = recordName
        self.recordType = recordType
        self.fields = fields
        self.asset = asset
        self.changeToken = changeToken
        self.savedAt = savedAt
        self.deleted = deleted
    }
}

public struct CreateZoneInput: Codable, Sendable {
    public var zoneId: String
    public var convoId: String?
    public init(zoneId: String, convoId: String? = nil) {
        self.zoneId = zoneId
        self.convoId = convoId
    }
}

public struct CreateZoneOutput: Codable, Sendable {
    public var zone: ZoneView
    public init(zone: ZoneView) { self.zone = zone }
}

public struct ZoneRefInput: Codable, Sendable {
    public var zoneId: String
    public init(zoneId: String) { self.zoneId = zoneId }
}

/// One record of `saveRecords`: its asset either uploaded before (`asset`) or inline (`assetData`).
public struct RecordToSave: Codable, Sendable {
    public var recordName: String
    public var recordType: String
    public var fields: [String: JSONValue]?
    public var asset: ZoneAssetRef?
    public var assetData: Data?

    public init(recordName: String, recordType: String, fields: [String: JSONValue]? = nil, asset: ZoneAssetRef? = nil, assetData: Data? = nil) {
        self.recordName = recordName
        self.recordType = recordType
        self.fields = fields
        self.asset = asset
        self.assetData = assetData
    }
}

/// `saveRecords`. Without `Authorization`, only `comment` records to a snapshot zone, with
/// `snapshotName` (the snapshot record's name) and `commentCapability` (the link's second secret).
public struct SaveRecordsInput: Codable, Sendable {
    public var zoneId: String
    public var records: [RecordToSave]
    public var snapshotName: String?
    public var commentCapability: String?

    public init(zoneId: String, records: [RecordToSave], snapshotName: String? = nil, commentCapability: String? = nil) {
        self.zoneId = zoneId
        self.records = records
        self.snapshotName = snapshotName
        self.commentCapability = commentCapability
    }
}

/// v1.1 `saveToInboxes` input: records for several inbox zones in one request. v1.3: the
/// records every inbox gets may travel once, in `records`, each inbox then naming only its
/// zone (and capability); an inbox with records of its own gets those.
public struct SaveToInboxesInput: Codable, Sendable {
    public struct Inbox: Codable, Sendable {
        public var zoneId: String
        /// This inbox's records (v1.1: required); nil for the request's `records` (v1.3).
        public var records: [RecordToSave]?
        /// v1.2: the inbox write capability its owner handed out (`putInboxCapability`), for a
        /// caller who shares no convo with the owner on this server.
        public var capability: String?
        public init(zoneId: String, records: [RecordToSave]? = nil, capability: String? = nil) {
            self.zoneId = zoneId
            self.records = records
            self.capability = capability
        }
    }
    public var inboxes: [Inbox]
    /// v1.3: the records of every inbox that has none of its own.
    public var records: [RecordToSave]?
    public init(inboxes: [Inbox], records: [RecordToSave]? = nil) {
        self.inboxes = inboxes
        self.records = records
    }
}

/// v1.2 `putInboxCapability` input: `keyHash` (SHA-256 hex of the capability's UTF-8 bytes)
/// registers or replaces capability `name` of inbox `zoneId`; no `keyHash` withdraws it.
public struct PutInboxCapabilityInput: Codable, Sendable {
    public var zoneId: String
    public var name: String
    public var keyHash: String?
    public init(zoneId: String, name: String, keyHash: String?) {
        self.zoneId = zoneId
        self.name = name
        self.keyHash = keyHash
    }
}

/// v1.1 `saveToInboxes` output: per inbox, its saved records or the error that refused them.
public struct SaveToInboxesOutput: Codable, Sendable {
    public struct Inbox: Codable, Sendable {
        public var zoneId: String
        public var records: [ZoneRecord]?
        public var error: String?
        public var message: String?
    }
    public var inboxes: [Inbox]
}

public struct SaveRecordsOutput: Codable, Sendable {
    public var records: [ZoneRecord]
    public init(records: [ZoneRecord]) { self.records = records }
}

public struct FetchChangesOutput: Codable, Sendable {
    public var records: [ZoneRecord]
    public var changeToken: String
    public var moreComing: Bool
    public init(records: [ZoneRecord], changeToken: String, moreComing: Bool) {
        self.records = records
        self.changeToken = changeToken
        self.moreComing = moreComing
    }
}

public struct GetRecordOutput: Codable, Sendable {
    public var record: ZoneRecord
    public init(record: ZoneRecord) { self.record = record }
}

public struct DeleteRecordsInput: Codable, Sendable {
    public var zoneId: String
    public var recordNames: [String]
    public init(zoneId: String, recordNames: [String]) {
        self.zoneId = zoneId
        self.recordNames = recordNames
    }
}

public struct DeleteRecordsOutput: Codable, Sendable {
    public var deleted: [String]
    public init(deleted: [String]) { self.deleted = deleted }
}

/// v1.1 `compactZone` output: what one compaction of a shared zone removed.
public struct CompactZoneOutput: Codable, Sendable, Equatable {
    /// The convo's compaction point after the run: records and messages below it are gone
    /// (nil: no checkpoint every active member has passed yet).
    public var compactedBefore: Int?
    /// Change and commit records deleted by this run.
    public var deletedRecords: Int
    /// Their asset bytes.
    public var freedBytes: Int
    /// Delivery Service messages forgotten by this run.
    public var forgottenMessages: Int
    public init(compactedBefore: Int?, deletedRecords: Int, freedBytes: Int, forgottenMessages: Int) {
        self.compactedBefore = compactedBefore
        self.deletedRecords = deletedRecords
        self.freedBytes = freedBytes
        self.forgottenMessages = forgottenMessages
    }
}

public struct ZoneUsage: Codable, Sendable, Equatable {
    public var zoneId: String
    public var records: Int
    public var bytes: Int
    public init(zoneId: String, records: Int, bytes: Int) {
        self.zoneId = zoneId
        self.records = records
        self.bytes = bytes
    }
}

public struct GetUsageOutput: Codable, Sendable {
    public var zones: [ZoneUsage]
    public var quotaBytes: Int
    public init(zones: [ZoneUsage], quotaBytes: Int) {
        self.zones = zones
        self.quotaBytes = quotaBytes
    }
}

/// The `data` of a `changed` event of `subscribeZone`.
public struct ZoneChangedEvent: Codable, Sendable, Equatable {
    public var zoneId: String
    public var changeToken: String
    public init(zoneId: String, changeToken: String) {
        self.zoneId = zoneId
        self.changeToken = changeToken
    }
}
