import Foundation
import ImprintCRDT

/// Sync diagnostics of one shared document for one member (`imprint status`).
public struct SyncStatus: Sendable, Hashable, Codable {
    /// A seq the Delivery Service sequenced whose record has not reached the zone.
    public struct Gap: Sendable, Hashable, Codable {
        public var seq: Int
        public var epoch: UInt64
        public var sender: String
        /// Seconds since this member first saw it missing.
        public var ageSeconds: Int
    }

    public var convoId: String
    public var did: String
    public var server: String
    public var epoch: UInt64
    /// The last seq processed with every seq below it.
    public var processedSeq: Int
    /// The newest seq the Delivery Service holds (nil when it could not be asked).
    public var latestSeq: Int?
    /// Seqs above `processedSeq` already applied (their records came before a gap's).
    public var bufferedSeqs: [Int]
    public var gaps: [Gap]
    /// Local changes the group has not seen yet.
    public var unpushedChanges: Int
    /// Messages encrypted but not yet delivered.
    public var outbox: Int
    /// Received changes waiting for changes this member does not hold.
    public var waitingChanges: Int
    /// Problems that need attention (roster disagreements, forked histories, refused commits).
    public var alerts: [String]
    /// Why this identity can no longer use the document (removed, left), or nil.
    public var ended: String?
    /// Why this copy of the home no longer sends (another copy of it sent), or nil.
    public var stale: String?
    /// Inbox copies of sent messages still to be saved (mailbox delivery; retried at the next
    /// push or pull).
    public var inboxCopiesPending = 0
    /// Of those, the copies a courier is carrying right now (the rest wait for the next push).
    public var inboxCopiesInFlight = 0
    /// The document's mailbox threshold (`share(…, mailboxThreshold:)`, `imprint share
    /// --mailbox-threshold N`), or nil.
    public var mailboxThreshold: Int?
    /// Whether this member reads an inbox zone now: it registered storage of its own, or the
    /// group is past the threshold or its store's participant limit.
    public var readsInbox = false
    /// Inbox copies this object found not to be the message the Delivery Service sequenced
    /// (planted or damaged), read from the shared zone instead, since it was opened.
    public var rejectedInboxCopies = 0
}

extension SharedDocument {
    /// Where this member stands: epoch, processed seq, gaps and their age, unpushed changes.
    /// Asks the Delivery Service for its newest seq; works offline too (`latestSeq` nil).
    public func status() async -> SyncStatus {
        try? reloadForReading()
        try? reloadBundleIfChanged()
        let known = (try? bundle.document.heads(of: state.sharedHeads.compactMap(ChangeHash.init(hex:)).filter { bundle.document.contains($0) })) ?? []
        var latest: Int?
        var processed = Int(cursor.seq)
        if state.endedReason == nil,
           let page = try? await account.delivery.getMessages(convoId: convoId, sinceSeq: Int(cursor.seq), limit: 1000) {
            latest = page.messages.last?.seq ?? Int(cursor.seq)
            if page.cursor != nil { latest = nil }
            // This member's own messages right after the cursor need no processing.
            for message in page.messages {
                guard message.seq == processed + 1, message.sender == did || state.processedAbove.contains(message.seq) else { break }
                processed = message.seq
            }
        }
        let now = Date()
        var status = SyncStatus(
            convoId: convoId, did: did, server: account.serverURL, epoch: group.epoch, processedSeq: processed, latestSeq: latest,
            bufferedSeqs: state.processedAbove.sorted(),
            gaps: state.gaps.map { SyncStatus.Gap(seq: $0.seq, epoch: $0.epoch, sender: $0.sender, ageSeconds: Int(now.timeIntervalSince($0.firstSeen))) },
            unpushedChanges: bundle.document.changes(since: known).count + state.resend.count, outbox: (try? OutboxMessage.pending(home: home, convoId: convoId, limit: account.options.maximumPayloadBytes + (1 << 20)).count) ?? 0,
            waitingChanges: bundle.document.pendingChangeCount, alerts: state.alerts, ended: state.endedReason,
            stale: state.staleReason)
        status.inboxCopiesPending = state.inboxPending.reduce(0) { $0 + $1.dids.count }
        status.inboxCopiesInFlight = state.inboxPending.filter { inboxCouriers[Self.courierKey($0.endpoint)]?.contains($0.seq) == true }
            .reduce(0) { $0 + $1.dids.count }
        status.mailboxThreshold = state.mailboxThreshold
        status.readsInbox = readsInbox
        status.rejectedInboxCopies = rejectedInboxCopies
        return status
    }
}
