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
    /// "Away" is what the Delivery Service knows (`getCursors`, `getMessages`): no
    /// acknowledgement for `window` (or none since they were added that long ago), and the
    /// first message they have not processed was sent that long ago too (so members of a
    /// document nobody wrote to for a while are not renewed by the first message after it).
    /// "Holding back" means their processed cursor is behind this member's. Each one's key package is fetched first (so
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
        _ = try await pullNow()
        guard state.admins.contains(did) else { return MemberRenewal() }
        let cutoff = now.addingTimeInterval(-window.inSeconds)
        let cursors = try await account.delivery.getCursors(convoId: convoId).cursors
        let quiet = cursors.filter { member in
            member.did != did && member.processedSeq < Int(cursor.seq) && (member.lastSeen ?? .distantPast) <= cutoff
        }
        // Quiet is not enough: in a document nobody wrote to for a while, every member's last
        // acknowledgement is old, and anything sent now puts them all behind. Away means a
        // message has been waiting for the member for the whole window.
        var waitingSince: [Int: Date] = [:]
        var away: [String] = []
        for member in quiet {
            if waitingSince[member.processedSeq] == nil {
                let next = try await account.delivery.getMessages(convoId: convoId, sinceSeq: member.processedSeq, limit: 1)
                waitingSince[member.processedSeq] = next.messages.first?.sentAt ?? now
            }
            if waitingSince[member.processedSeq]! <= cutoff { away.append(member.did) }
        }
        guard !away.isEmpty else { return MemberRenewal() }
        let fetched = try await keyPackages(for: away)
        let renewable = away.filter { !fetched.missing.contains($0) }
        for member in renewable { try await removeNow(member) }
        if !renewable.isEmpty { try await addNow(renewable, keyPackages: fetched.keyPackages) }
        return MemberRenewal(renewed: renewable, withoutKeyPackage: fetched.missing)
    }

    /// Renews the members away longer than `SyncOptions.renewMembersAwayFor` when that is set,
    /// this member is an admin and the last check is old enough (a quarter of the window, at
    /// most an hour): the end of every pull. A renewal that fails is an alert in `status`,
    /// not a failed pull (what the pull received is durable already); it is tried again at
    /// the next check.
    func renewIfDue(now: Date = Date()) async -> [String] {
        guard let window = account.options.renewMembersAwayFor, state.endedReason == nil, state.admins.contains(did) else { return [] }
        let interval = min(window.inSeconds / 4, 3600)
        if let last = lastRenewalCheck, now.timeIntervalSince(last) < interval { return [] }
        lastRenewalCheck = now
        do {
            return try await renewNow(awayFor: window, now: now).renewed
        } catch {
            state.alerts.append("renewing members away for over \(Int(window.inSeconds)) s failed: \(error)")
            try? saveState()
            return []
        }
    }
}
