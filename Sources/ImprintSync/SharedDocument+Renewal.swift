import Foundation
import ImprintDelivery
import ImprintMLS
import ImprintEncoding

/// What `SharedDocument.renewMembers(awayFor:)` did.
public struct MemberRenewal: Sendable, Hashable {
    /// Members removed and added again with a fresh Welcome.
    public var renewed: [String] = []
    /// Members away as long, left in place because the Delivery Service had no key package
    /// of theirs to add them again with (they keep holding compaction back until they return
    /// or publish key packages).
    public var withoutKeyPackage: [String] = []
}

extension SharedDocument {
    /// Removes the members who have shown no sign of life for longer than `window` and still
    /// hold compaction back, and adds them again at once with a fresh Welcome: the zone can
    /// then drop what only they still needed, and they are never locked out.
    ///
    /// "Away" is what the Delivery Service knows (`getCursors`): no acknowledgement for
    /// `window`, or none since they were added that long ago. "Holding back" means their
    /// processed cursor is behind this member's. Each one's key package is fetched first (so
    /// nobody is removed who cannot be added back), then each is removed in a commit of its
    /// own, then all are added in one commit followed by a snapshot, as `invite` does.
    ///
    /// The renewed member's client notices at its next `pull` (or `open`): the commit that
    /// removed it ends its old membership, the waiting Welcome starts a new one in the same
    /// bundle, the snapshot brings everything it missed, and the edits it made while away
    /// are pushed in the new epoch (`rejoin`). Admins only; others get an empty result.
    ///
    /// ```swift
    /// let renewal = try await doc.renewMembers(awayFor: .seconds(14 * 24 * 3600))
    /// print("renewed", renewal.renewed)
    /// ```
    @discardableResult
    public func renewMembers(awayFor window: Duration, now: Date = Date()) async throws -> MemberRenewal {
        try await exclusive { try await renewNow(awayFor: window, now: now) }
    }

    func renewNow(awayFor window: Duration, now: Date) async throws -> MemberRenewal {
        try ensureActive()
        try await pullNow()
        guard state.admins.contains(did) else { return MemberRenewal() }
        let cutoff = now.addingTimeInterval(-window.inSeconds)
        let cursors = try await account.delivery.getCursors(convoId: convoId).cursors
        let away = cursors.filter { member in
            member.did != did && member.processedSeq < Int(cursor.seq) && (member.lastSeen ?? .distantPast) <= cutoff
        }.map(\.did)
        guard !away.isEmpty else { return MemberRenewal() }
        let fetched = try await keyPackages(for: away)
        let renewable = away.filter { !fetched.missing.contains($0) }
        for member in renewable { try await removeNow(member) }
        if !renewable.isEmpty { try await addNow(renewable, keyPackages: fetched.keyPackages) }
        return MemberRenewal(renewed: renewable, withoutKeyPackage: fetched.missing)
    }
}
