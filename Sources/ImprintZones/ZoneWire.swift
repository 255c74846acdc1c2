import Foundation

/// The zone service's JSON bodies, as the zone API contract spells them (camelCase, standard
/// base64 for `assetData`, RFC 3339 times through `WireJSON`). Decoded responses are checked
/// against ``ZoneRules`` before they become ``ZoneRecord``s (``ZoneWire/RecordView/record()``),
/// so a hostile or broken server yields ``ZoneError/Code/invalidResponse``, never a bad value.
enum ZoneWire {
    struct CreateZoneInput: Codable, Sendable, Hashable {
        var zoneId: String
        var convoId: String?
    }

    struct ZoneView: Codable, Sendable, Hashable {
        var zoneId: String
        var owner: String?
        var kind: String
        var createdAt: Date
    }

    struct CreateZoneOutput: Codable, Sendable, Hashable {
        var zone: ZoneView
    }

    struct ZoneRefInput: Codable, Sendable, Hashable {
        var zoneId: String
    }

    struct EmptyOutput: Codable, Sendable, Hashable {}

    struct CompactZoneOutput: Codable, Sendable, Hashable {
        var compactedBefore: Int?
        var deletedRecords: Int
        var freedBytes: Int
        var forgottenMessages: Int
    }

    /// `uploadAsset`'s answer.
    typealias AssetOutput = ZoneAsset

    struct RecordInput: Codable, Sendable, Hashable {
        var recordName: String
        var recordType: String
        var fields: ZoneRecordFields
        var asset: ZoneAsset?
        var assetData: Data?

        init(_ draft: ZoneRecordDraft) {
            recordName = draft.recordName
            recordType = draft.recordType
            fields = draft.fields
            switch draft.asset {
            case .uploaded(let asset): self.asset = asset
            case .inline(let bytes): assetData = Data(bytes)
            }
        }
    }

    struct SaveRecordsInput: Codable, Sendable, Hashable {
        var zoneId: String
        var records: [RecordInput]
    }

    struct RecordView: Codable, Sendable, Hashable {
        var recordName: String
        var recordType: String
        var fields: ZoneRecordFields
        /// Absent on a tombstone from the zone service (a deleted record has no content).
        var asset: ZoneAsset?
        var changeToken: String
        var savedAt: Date
        var deleted: Bool

        init(_ record: ZoneRecord) {
            recordName = record.recordName
            recordType = record.recordType
            fields = record.fields
            asset = record.asset
            changeToken = record.changeToken
            savedAt = record.savedAt
            deleted = record.deleted
        }

        /// The record, if every part keeps the rules.
        func record() throws -> ZoneRecord {
            guard let asset = asset ?? (deleted ? ZoneAsset(of: []) : nil) else {
                throw ZoneError(.invalidResponse, "record without an asset", recordName: recordName)
            }
            do {
                try ZoneRules.checkRecordName(recordName)
                try ZoneRules.checkRecordType(recordType, recordName: recordName)
                try ZoneRules.checkFields(fields, recordName: recordName)
                try ZoneRules.checkAsset(asset, recordName: recordName)
                guard changeToken.utf8.count <= 1024 else { throw ZoneError(.invalidArgument, "changeToken over 1 KiB") }
            } catch let error as ZoneError {
                throw ZoneError(.invalidResponse, "record breaks the rules: \(error.context)", recordName: error.recordName)
            }
            return ZoneRecord(recordName: recordName, recordType: recordType, fields: fields, asset: asset,
                              changeToken: changeToken, savedAt: savedAt, deleted: deleted)
        }
    }

    struct RecordsOutput: Codable, Sendable, Hashable {
        var records: [RecordView]
    }

    struct SaveToInboxesInput: Codable, Sendable, Hashable {
        struct Inbox: Codable, Sendable, Hashable {
            var zoneId: String
            /// nil: the request's `records` (v1.3).
            var records: [RecordInput]?
            /// v1.2: an inbox write capability (`putInboxCapability`).
            var capability: String?
        }
        var inboxes: [Inbox]
        /// v1.3: the records of every inbox without records of its own, sent once.
        var records: [RecordInput]?
    }

    /// v1.2 `putInboxCapability`.
    struct PutInboxCapabilityInput: Codable, Sendable, Hashable {
        var zoneId: String
        var name: String
        var keyHash: String?
    }

    struct SaveToInboxesOutput: Codable, Sendable, Hashable {
        struct Inbox: Codable, Sendable, Hashable {
            var zoneId: String
            var records: [RecordView]?
            var error: String?
            var message: String?
        }
        var inboxes: [Inbox]
    }

    struct FetchChangesOutput: Codable, Sendable, Hashable {
        var records: [RecordView]
        var changeToken: String
        var moreComing: Bool
    }

    struct GetRecordOutput: Codable, Sendable, Hashable {
        var record: RecordView
    }

    struct DeleteRecordsInput: Codable, Sendable, Hashable {
        var zoneId: String
        var recordNames: [String]
    }

    struct DeleteRecordsOutput: Codable, Sendable, Hashable {
        var deleted: [String]
    }

    /// The data of a `changed` event of `subscribeZone`.
    struct ChangedEvent: Codable, Sendable, Hashable {
        var zoneId: String
        var changeToken: String
    }

    /// `getUsage`'s answer.
    struct UsageOutput: Codable, Sendable, Hashable {
        struct Zone: Codable, Sendable, Hashable {
            var zoneId: String
            var records: Int
            var bytes: Int64
        }
        var zones: [Zone]
        var quotaBytes: Int64
    }

    /// Change tokens travel as text; the zone service's are at most this long.
    static let maximumChangeTokenBytes = 64 << 10
}
