import Foundation
import Hummingbird
import ImprintDelivery
import ImprintServer

/// The single persistence seam of the zone service: record metadata in the Delivery Service's
/// database (so access is decided on the roster as it is at the moment of the request, on
/// every instance), asset bytes on disk or in PostgreSQL. One implementation per backend
/// (`SQLiteZoneServiceStore`, `PostgresZoneServiceStore`), both passing the same tests.
///
/// Guarantees every implementation keeps:
/// - each method decides access (`ZoneRules`) and acts in one transaction;
/// - a zone's change numbers become visible in ascending order: a change numbered `n` is
///   committed before any change `> n` of the same zone is, so a reader that saw `n` never
///   misses a smaller one (`fetchChanges` never skips a record);
/// - `saveRecords` is all or nothing; an acknowledged save is durable (it committed);
/// - a blob is stored once per hash, is complete whenever a row names it, and goes when no
///   record and no pending upload references it.
/// Callers pass inputs already checked for shape and get `DeliveryError`s for rule violations.
protocol ZoneServiceStore: Sendable {
    func migrate() async throws

    /// Rung with key `ZoneEvents.key(zoneId)` after a change to the zone committed, on this
    /// instance and (PostgreSQL) on every other instance on the database.
    var bell: EventBell { get }

    /// Where uploads are staged before `commitUpload` (on the same file system as the blobs).
    var stagingDirectory: URL { get }
    /// True if `commitUpload` keeps the staged file itself as the blob (so it must be fsynced
    /// when staged); false if it copies the bytes into a database whose commit makes them
    /// durable (the staged file is scratch, not flushed).
    var keepsStagedFiles: Bool { get }

    func createZone(_ zone: ZoneID, convoId: String?, caller: String, now: Date) async throws -> ZoneView
    func deleteZone(_ zone: ZoneID, caller: String) async throws

    /// Checks that `caller` may write to `zone` and that `size` more bytes fit the owner's quota
    /// (before the body is read). `inboxCapability` is the SHA-256 hex of the inbox write
    /// capability the request presented, if any (`ZoneRules.RosterQuestion.inboxWriter`).
    func admitUpload(_ zone: ZoneID, caller: String, inboxCapability: String?, size: Int, quota: Int) async throws
    /// Stores a staged upload as blob `staged.hash` (once however often uploaded) and records it
    /// as uploaded to `zone`, so that a record there may reference it. Consumes the staged file.
    func commitUpload(_ zone: ZoneID, caller: String, inboxCapability: String?, staged: StagedAsset, quota: Int, now: Date) async throws

    /// Registers (`keyHash`) or withdraws (nil) the inbox write capability `name` of inbox
    /// `zone`, for its owner only. A capability lets senders who share no convo with the owner
    /// on this server append to the inbox (v1.2). Replacing a name's hash revokes the old
    /// value at once. At most `limit` names per inbox.
    func putInboxCapability(_ zone: ZoneID, caller: String, name: String, keyHash: String?, limit: Int, now: Date) async throws

    func saveRecords(_ batch: RecordBatch) async throws -> [ZoneRecord]
    /// Saves records into several inbox zones (`saveToInboxes`) in one transaction, with set-
    /// based reads and writes: every inbox is decided on its own (`InboxFanOut.plan`) and
    /// answered in order with its records or the error that refused it, and the accepted ones
    /// are written together (all of them or, if the transaction fails, none). Each inbox keeps
    /// `saveRecords`' guarantees: its change numbers in order, an unchanged retry answered
    /// with the stored record. Consumes the staged inline payloads.
    func saveToInboxes(_ fanOut: InboxFanOut) async throws -> [Result<[ZoneRecord], DeliveryError>]
    func deleteRecords(_ zone: ZoneID, caller: String, names: [String], now: Date, tombstoneRetention: Int64) async throws -> [String]

    func changes(_ zone: ZoneID, caller: String, since: String?, limit: Int) async throws -> FetchChangesOutput
    /// The zone's newest change token, after checking `caller` may read it.
    func currentToken(_ zone: ZoneID, caller: String) async throws -> ChangeToken
    func record(_ zone: ZoneID, reader: ZoneReader, name: String, now: Date) async throws -> ZoneRecord
    /// The asset `hash` if a record `reader` may read references it in `zone`.
    func readableAsset(_ zone: ZoneID, reader: ZoneReader, hash: String, now: Date) async throws -> ZoneAssetRef
    /// Writes bytes `range` of blob `hash` to `writer`, a bounded piece at a time.
    func writeAsset<Writer: ResponseBodyWriter>(hash: String, range: Range<Int>, to writer: inout Writer) async throws

    func usage(owner: String) async throws -> [ZoneUsage]

    /// Compacts shared zone `zone` now (`ZoneCompaction`), for an active member of its convo
    /// (`caller`) or for the server's own compactor (`caller` nil).
    func compact(_ zone: ZoneID, caller: String?, now: Date) async throws -> CompactZoneOutput
    /// Shared zones whose convo has a compaction point past what was compacted, at most `limit`.
    func zonesToCompact(limit: Int) async throws -> [ZoneID]

    func shutdown() async throws
}

/// Who reads: an authenticated DID, or (snapshot zones only) whoever knows a snapshot
/// record's name, its read capability.
enum ZoneReader: Sendable, Equatable {
    case did(String)
    case snapshotCapability(recordName: String)
}

/// Who writes a batch: an authenticated DID, or the holder of a snapshot's comment capability.
enum ZoneWriter: Sendable, Equatable {
    case did(String)
    /// `capabilityHash` is the SHA-256 (hex) of the presented capability.
    case commentCapability(snapshotName: String, capabilityHash: String)

    var did: String? {
        if case .did(let did) = self { return did }
        return nil
    }
}

/// `saveRecords` after validation.
struct RecordBatch: Sendable {
    var zone: ZoneID
    var writer: ZoneWriter
    var records: [RecordSave]
    var quota: Int
    var now: Date
    /// SHA-256 hex of the inbox write capability the request presented, if any.
    var inboxCapability: String? = nil
}

/// One record of a batch; `inline` is its `assetData`, already staged as a blob file.
struct RecordSave: Sendable {
    var name: String
    var type: String
    var fields: [String: JSONValue]
    /// `fields` as stored (wire JSON, sorted keys).
    var fieldsJSON: String
    var routing: RoutingFields
    var asset: ZoneAssetRef?
    var inline: StagedAsset?
}
