/// A store of record zones, shaped like CloudKit's zone operations so that the folder, HTTP,
/// in-memory and (planned) CloudKit stores stand behind one seam. docs/zones.md.
///
/// Guarantees every conforming store keeps (the conformance suite in `ImprintZonesTests`
/// checks them on each):
/// - `saveRecords` is all or nothing. Saving a record again with the same asset hash is a
///   no-op that returns the stored record (so a retry after a lost answer is safe); the same
///   name with another hash throws ``ZoneError/Code/recordExists`` and saves nothing. A
///   deleted name may be saved again.
/// - An asset is stored once per zone, addressed by the SHA-256 of its bytes; a record may only
///   reference an asset the zone holds (``ZoneError/Code/assetNotFound``), and fetched asset
///   bytes always hash to their name (``ZoneError/Code/assetCorrupt`` otherwise).
/// - `fetchChanges` pages through every record saved or deleted after a token, never skipping
///   one, deletions as tombstones; pages end with `moreComing == false`. A token the store
///   does not know throws ``ZoneError/Code/changeTokenExpired``.
/// - `subscribe` yields a notification after changes it sees, until the consumer stops.
///
/// Catching up on a zone, restarting when the store no longer knows the token:
/// ```swift
/// var token: ZoneChangeToken? = savedToken
/// while true {
///     let page: ZoneChangeBatch
///     do {
///         page = try await store.fetchChanges(zoneId: zoneId, since: token)
///     } catch let error as ZoneError where error.code == .changeTokenExpired {
///         token = nil // fetch from the start; records are idempotent to apply
///         continue
///     }
///     apply(page.records)
///     token = page.changeToken
///     if !page.moreComing { break }
/// }
/// ```
public protocol ZoneStore: Sendable {
    /// Creates an empty zone. Throws ``ZoneError/Code/zoneExists`` if it exists.
    /// `convoId` names the Delivery Service convo of a shared zone (the HTTP store sends it).
    func createZone(_ zoneId: String, convoId: String?) async throws -> ZoneInfo

    /// Deletes a zone with its records and assets. Throws ``ZoneError/Code/zoneNotFound``.
    func deleteZone(_ zoneId: String) async throws

    /// Stores `bytes` as an asset of the zone (at most ``ZoneLimits/maximumAssetBytes``);
    /// storing the same bytes again is a no-op.
    func uploadAsset(zoneId: String, bytes: [UInt8]) async throws -> ZoneAsset

    /// The bytes of an asset of the zone, checked against its hash.
    func fetchAsset(zoneId: String, hash: String) async throws -> [UInt8]

    /// Saves `records` atomically (1...``ZoneLimits/maximumBatchRecords``); returns them as stored.
    func saveRecords(zoneId: String, _ records: [ZoneRecordDraft]) async throws -> [ZoneRecord]

    /// The changes after `since` (from the start when nil), at most `limit` (1...1000) records
    /// per page, except that a store whose atomic batches cannot be split may return one
    /// whole batch.
    func fetchChanges(zoneId: String, since: ZoneChangeToken?, limit: Int) async throws -> ZoneChangeBatch

    /// One live record. Throws ``ZoneError/Code/recordNotFound`` for an unknown or deleted name.
    func record(zoneId: String, named recordName: String) async throws -> ZoneRecord

    /// Deletes records; returns the names that were live and are now tombstones.
    func deleteRecords(zoneId: String, names: [String]) async throws -> [String]

    /// Notifications of changes to the zone until the consumer stops iterating. The
    /// subscription is live when the call returns: every change after that is notified (a
    /// burst may be coalesced into one notification). Throws ``ZoneError/Code/zoneNotFound``.
    func subscribe(zoneId: String) async throws -> AsyncThrowingStream<ZoneChangeNotification, any Error>

    /// Compacts shared zone `zoneId` now, where the store can (see the default below).
    func compact(zoneId: String) async throws -> ZoneCompaction?

    /// Saves records into several inbox zones (mailbox fan-out), each inbox as one
    /// `saveRecords` with its own outcome: one inbox's refusal leaves the others saved. The
    /// default saves the inboxes eight at a time; the zone service takes them in one request.
    func saveToInboxes(_ saves: [InboxSave]) async throws -> [InboxSaveResult]

    /// How many participants one shared zone of this store serves (a CloudKit share: about
    /// 100), or nil for no limit. Past it, shared documents also deliver every message to each
    /// recipient's inbox zone (mailbox delivery), whatever their own threshold says.
    var participantLimit: Int? { get }
}

extension ZoneStore {
    /// Creates a zone that belongs to no convo.
    public func createZone(_ zoneId: String) async throws -> ZoneInfo {
        try await createZone(zoneId, convoId: nil)
    }

    /// Asks the store to compact shared zone `zoneId` now: delete the change sets that every
    /// active member has processed, below the newest snapshot they all passed (the zone API's
    /// `compactZone`). nil from a store that has no such operation (a folder, memory): their
    /// records stay until deleted.
    public func compact(zoneId: String) async throws -> ZoneCompaction? { nil }

    /// No limit: the stores in this module serve any number of participants per zone.
    public var participantLimit: Int? { nil }

    public func saveToInboxes(_ saves: [InboxSave]) async throws -> [InboxSaveResult] {
        try await concurrentMap(saves, width: 8) { save in
            do {
                return InboxSaveResult(zoneId: save.zoneId, records: try await self.saveRecords(zoneId: save.zoneId, save.records))
            } catch let error as ZoneError {
                return InboxSaveResult(zoneId: save.zoneId, error: error)
            }
        }
    }

    /// The changes after `since`, 200 records per page (the zone API's default).
    public func fetchChanges(zoneId: String, since: ZoneChangeToken?) async throws -> ZoneChangeBatch {
        try await fetchChanges(zoneId: zoneId, since: since, limit: ZoneLimits.defaultFetchLimit)
    }
}
