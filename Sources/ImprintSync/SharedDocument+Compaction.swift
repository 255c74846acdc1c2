import Foundation
import ImprintDelivery
import ImprintZones

/// What `SharedDocument.compact()` did.
public struct CompactionReport: Sendable, Hashable {
    /// The seq of the snapshot sent and marked as a checkpoint.
    public var snapshotSeq: Int
    /// This member's processed cursor as the Delivery Service stores it afterwards.
    public var acknowledgedSeq: Int
    /// What the zone service removed now (nil: the zone store has no compaction of its own).
    public var zone: ZoneCompaction?
    /// Every active member's cursor, and the convo's compaction point: compaction waits for
    /// the member with the lowest cursor.
    public var cursors: GetCursorsOutput
    /// Members renewed first because they were away too long (`renewMembers(awayFor:)`).
    public var renewal = MemberRenewal()
}

extension SharedDocument {
    /// Epoch-tied compaction, on demand (`imprint compact`): sends a snapshot of the whole
    /// document in the current epoch and marks it as a checkpoint, processes it (so this
    /// member's cursor passes it), then asks the zone service to compact the shared zone now.
    ///
    /// The zone deletes the change sets below the newest checkpoint that **every** active
    /// member has processed, so this call removes records only as far as the slowest member
    /// allows; the server compacts again by itself once the others have caught up. Nothing
    /// of the document is lost: the snapshot holds its full history, and every member that
    /// still needs a record is, by its cursor, below the point.
    ///
    /// ```swift
    /// let report = try await doc.compact()
    /// print(report.zone?.deletedRecords ?? 0, "records deleted; point", report.cursors.compactableBefore ?? 0)
    /// ```
    ///
    /// With `renewingMembersAwayFor`, members who have shown no sign of life for that long
    /// and hold compaction back are renewed first (`renewMembers(awayFor:)`): removed and
    /// added again with a fresh Welcome, so compaction passes their old cursors and they are
    /// never locked out.
    public func compact(renewingMembersAwayFor window: Duration? = nil) async throws -> CompactionReport {
        try await exclusive {
            try ensureActive()
            var renewal = MemberRenewal()
            if let window { renewal = try await renewNow(awayFor: window, now: Date()) }
            try await finishOutbox()
            try await sendOwedSnapshot()
            try reloadBundleIfChanged()
            let seq = try await inCurrentEpoch(or: "the epoch kept moving while compacting") { try await sendSnapshot() }
            _ = try await pullNow()
            let zone = try await account.zones.compact(zoneId: zoneId)
            let cursors = try await account.delivery.getCursors(convoId: convoId)
            return CompactionReport(snapshotSeq: seq, acknowledgedSeq: state.acknowledgedSeq, zone: zone, cursors: cursors,
                                    renewal: renewal)
        }
    }
}
