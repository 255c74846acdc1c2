import Foundation

/// An opaque position in one zone's change feed, as a store hands it out.
///
/// Keep it and pass it back to `fetchChanges(zoneId:since:limit:)`; never parse it. A store
/// that does not know a token (another store's, a deleted zone's, damaged bytes) throws
/// ``ZoneError/Code/changeTokenExpired`` and the caller fetches from the start (`since: nil`).
public struct ZoneChangeToken: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The token as text (what the HTTP API carries).
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}

/// One page of a zone's change feed.
public struct ZoneChangeBatch: Sendable, Hashable {
    /// Every record saved or deleted after the token the page was fetched with (tombstones
    /// for deletions), each in its current state; a record changed twice may appear once.
    public var records: [ZoneRecord]
    /// Where the next page starts.
    public var changeToken: ZoneChangeToken
    /// True when more changes wait beyond this page: fetch again with `changeToken`.
    public var moreComing: Bool
    /// Stored records a store could not read (a truncated or altered file): each a
    /// ``ZoneError/Code/damagedRecord`` naming it. They are not behind `changeToken`, so a
    /// repaired file is delivered by a later fetch; the other records are never hidden by them.
    public var damaged: [ZoneError]

    public init(records: [ZoneRecord], changeToken: ZoneChangeToken, moreComing: Bool, damaged: [ZoneError] = []) {
        self.records = records
        self.changeToken = changeToken
        self.moreComing = moreComing
        self.damaged = damaged
    }
}

/// "Something changed in this zone": fetch its changes. `changeToken` is the store's newest
/// token when it noticed (informational; fetch from your own token).
public struct ZoneChangeNotification: Sendable, Hashable {
    public var zoneId: String
    public var changeToken: ZoneChangeToken?

    public init(zoneId: String, changeToken: ZoneChangeToken?) {
        self.zoneId = zoneId
        self.changeToken = changeToken
    }
}

/// A zone as `createZone` reports it.
public struct ZoneInfo: Sendable, Hashable {
    public var zoneId: String
    /// The owner's DID where the store knows one (the zone service does).
    public var owner: String?
    /// `shared`, `inbox`, `snapshot` (from the id's prefix), or `plain` for other ids.
    public var kind: String
    public var createdAt: Date

    public init(zoneId: String, owner: String?, kind: String, createdAt: Date) {
        self.zoneId = zoneId
        self.owner = owner
        self.kind = kind
        self.createdAt = createdAt
    }

    /// The kind that follows from a zone id's prefix.
    public static func kind(of zoneId: String) -> String {
        if zoneId.hasPrefix("doc_") { return "shared" }
        if zoneId.hasPrefix("inbox_") { return "inbox" }
        if zoneId.hasPrefix("share_") { return "snapshot" }
        return "plain"
    }
}

/// What the caller's zones hold on a zone service, against its quota (`getUsage`).
public struct ZoneUsage: Sendable, Hashable {
    public struct Zone: Sendable, Hashable {
        public var zoneId: String
        public var records: Int
        public var bytes: Int64
    }

    public var zones: [Zone]
    public var quotaBytes: Int64
}

/// What one compaction of a shared zone removed (`ZoneStore.compact(zoneId:)`).
public struct ZoneCompaction: Sendable, Hashable {
    /// Records and Delivery Service messages below this seq are gone (nil: nothing every
    /// active member has passed yet).
    public var compactedBefore: Int?
    public var deletedRecords: Int
    public var freedBytes: Int
    public var forgottenMessages: Int
}

/// Records for one inbox zone in a fan-out (`ZoneStore.saveToInboxes`).
public struct InboxSave: Sendable, Hashable {
    public var zoneId: String
    public var records: [ZoneRecordDraft]
    /// The inbox write capability its owner handed out, for a sender who shares no convo with
    /// the owner on the inbox's server (`HTTPZoneStore.putInboxCapability`); stores that decide
    /// access otherwise ignore it.
    public var capability: String?
    public init(zoneId: String, records: [ZoneRecordDraft], capability: String? = nil) {
        self.zoneId = zoneId
        self.records = records
        self.capability = capability
    }
}

/// What became of one inbox's records in a fan-out: saved, or refused with `error`.
public struct InboxSaveResult: Sendable {
    public var zoneId: String
    public var records: [ZoneRecord] = []
    public var error: ZoneError?
    public init(zoneId: String, records: [ZoneRecord] = [], error: ZoneError? = nil) {
        self.zoneId = zoneId
        self.records = records
        self.error = error
    }
}
