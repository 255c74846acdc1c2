import Foundation
import ImprintServer

/// Epoch-tied compaction of shared zones: what may go, and when.
///
/// The point comes from the Delivery Service (`CompactionPoint`): the newest checkpoint (a
/// snapshot message) that every active member's processed cursor has reached. Below it no
/// active member will read a record again, and a member added later starts from its own
/// Welcome and the snapshot sent with it. So one compaction run, in one transaction:
///
/// 1. deletes the zone's `change` and `commit` records whose `seq` is below the point
///    (outright, without tombstones: every reader has processed them);
/// 2. advances the zone's change number by one and expires every older change token
///    (`purgedThrough`), so a reader that held one refetches the zone from the start
///    (410 `ChangeTokenExpired`) instead of missing the deletions;
/// 3. forgets the Delivery Service's messages below the point.
///
/// After the transaction, assets no record references any more are removed and the
/// database gives its free pages back (SQLite: `incremental_vacuum`). `attachment` records
/// stay: an asset's content outlives the message that announced it, and its key reaches new
/// members with their snapshot. A member that does not acknowledge holds the point where it
/// is: compaction waits for it and never deletes what it has not processed.
enum ZoneCompaction {
    /// Record types deleted below the compaction point.
    static let compactedTypes = ["change", "commit"]

    /// `compactZone` is for shared zones only (inbox and snapshot zones are their owner's to prune).
    static func check(_ zone: ZoneID) throws {
        guard zone.kind == .shared else { throw DeliveryError.invalidRequest("only shared zones (doc_) are compacted") }
    }
}
