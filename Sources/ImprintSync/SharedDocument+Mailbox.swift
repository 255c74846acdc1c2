import Foundation
import ImprintDelivery
import ImprintMLS
import ImprintZones

/// Mailbox delivery: past a member count the sharer chooses (`share(…, mailboxThreshold:)`,
/// `imprint share --mailbox-threshold N`), every message is also saved into each recipient's
/// inbox zone `inbox_<did>`, and recipients read their inbox first.
///
/// The shared zone is still written once per message: joiners start from it, compaction works
/// on it, and a recipient whose inbox copy is missing falls back to it. So the inbox is an
/// additional path, not a replacement, and a switch in either direction (members joining or
/// leaving across the threshold, the threshold changing) loses nothing; receivers handle each
/// seq once, whichever zone it came from (the Delivery Service's order is the only order).
/// What the inbox is for: a store that cannot share one zone with everyone (CloudKit shares
/// stop at 100 participants) and, next, members who keep their records with a provider of
/// their own (`registerStorage`).
enum MailboxPolicy {
    /// Whether a document of `members` members (the sender included) delivers to inboxes.
    static func applies(threshold: Int?, members: Int) -> Bool {
        guard let threshold else { return false }
        return members > threshold
    }

    static func inbox(of did: String) -> String { "inbox_\(did)" }

    /// Chunked copies (messages over the inline limit) go to at most this many inboxes at a
    /// time, so one slow inbox never holds the others and a group of hundreds does not open
    /// hundreds of connections. Small copies go in one `saveToInboxes` request.
    static let parallelSaves = 8
}

extension SharedDocument {
    /// Whether this member reads its inbox (the document is past its threshold as this
    /// member's group has it).
    var readsInbox: Bool { MailboxPolicy.applies(threshold: state.mailboxThreshold, members: group.members.count) }

    /// Creates this member's inbox zone once mailbox delivery applies to it (idempotent).
    func ensureInbox() async throws {
        guard readsInbox, !state.inboxCreated else { return }
        do {
            _ = try await account.zones.createZone(MailboxPolicy.inbox(of: did), convoId: nil)
        } catch let error as ZoneError where error.code == .zoneExists {
            // Made by an earlier run, or for another document: one inbox per identity.
        }
        state.inboxCreated = true
        try saveState()
    }

    /// Queues the inbox copies of message `seq` for `recipients` (when the document is past
    /// its threshold) and saves them; `ciphertext` is the message, at hand right after
    /// sending. Copies that fail stay queued in the sync state and are retried from the shared
    /// zone's record at the next push or pull.
    func queueInboxCopies(seq: Int, epoch: UInt64, hash: String, recipients: [String], ciphertext: [UInt8]) async throws {
        guard MailboxPolicy.applies(threshold: state.mailboxThreshold, members: recipients.count + 1), !recipients.isEmpty else { return }
        state.inboxPending.append(SyncState.InboxDelivery(seq: seq, epoch: epoch, hash: hash, dids: recipients))
        try saveState()
        try await deliverInboxCopies(known: [seq: ciphertext])
    }

    /// What became of one inbox copy.
    enum InboxOutcome: Sendable {
        case saved, gone, failed

        /// A refusal by an inbox that does not exist or will not take this member's copies
        /// (the recipient never made one, or left) is final; anything else is retried.
        init(refusal error: any Error) {
            guard let zone = error as? ZoneError, zone.code == .zoneNotFound || zone.code == .forbidden else {
                self = .failed
                return
            }
            self = .gone
        }
    }

    /// Saves every queued inbox copy (`saveInline`, `saveChunked`). A copy whose
    /// inbox does not exist or refuses this member (the recipient never made one, or left)
    /// is dropped: that recipient reads the shared zone. Others that fail stay queued.
    func deliverInboxCopies(known: [Int: [UInt8]] = [:]) async throws {
        guard !state.inboxPending.isEmpty else { return }
        var remaining: [SyncState.InboxDelivery] = []
        for delivery in state.inboxPending {
            var ciphertext = known[delivery.seq]
            if ciphertext == nil { ciphertext = try await Self.fetchPayload(seq: delivery.seq, convoId: convoId, account: account) }
            guard let ciphertext else {
                remaining.append(delivery)  // not readable from the shared zone right now
                continue
            }
            let base = Self.recordBase(convoId: convoId, seq: delivery.seq)
            let fields = ZoneRecordFields(convoId: convoId, epoch: Int64(delivery.epoch), seq: Int64(delivery.seq))
            let outcomes = ciphertext.count <= ZoneLimits.inlineAssetBytes
                ? try await saveInline(ciphertext, hash: delivery.hash, to: delivery.dids, baseName: base, fields: fields)
                : try await saveChunked(ciphertext, hash: delivery.hash, to: delivery.dids, baseName: base, fields: fields)
            let failed = outcomes.filter { if case .failed = $0.1 { true } else { false } }.map(\.0)
            if !failed.isEmpty {
                var left = delivery
                left.dids = delivery.dids.filter(failed.contains)
                remaining.append(left)
            }
        }
        state.inboxPending = remaining
        try saveState()
    }

    /// A small message's copies: one record per inbox, all in one fan-out call (the zone
    /// service takes them in one request: `saveToInboxes`).
    func saveInline(_ ciphertext: [UInt8], hash: String, to dids: [String], baseName: String,
                    fields: ZoneRecordFields) async throws -> [(String, InboxOutcome)] {
        let draft = Self.inlineRecord(ciphertext, hash: hash, baseName: baseName, fields: fields)
        let results: [InboxSaveResult]
        do {
            results = try await account.zones.saveToInboxes(dids.map { InboxSave(zoneId: MailboxPolicy.inbox(of: $0), records: [draft]) })
        } catch {
            return dids.map { ($0, .failed) }  // the request itself failed: every copy is retried
        }
        let byZone = Dictionary(results.map { ($0.zoneId, $0) }, uniquingKeysWith: { first, _ in first })
        return dids.map { did in
            guard let result = byZone[MailboxPolicy.inbox(of: did)] else { return (did, .failed) }
            guard let error = result.error else { return (did, .saved) }
            return (did, InboxOutcome(refusal: error))
        }
    }

    /// A large message's copies: its chunks uploaded into each inbox, eight inboxes at a time.
    func saveChunked(_ ciphertext: [UInt8], hash: String, to dids: [String], baseName: String,
                     fields: ZoneRecordFields) async throws -> [(String, InboxOutcome)] {
        let zones = account.zones
        return try await concurrentMap(dids, width: MailboxPolicy.parallelSaves) { did in
            do {
                try await Self.saveCopy(ciphertext, hash: hash, to: zones, zoneId: MailboxPolicy.inbox(of: did),
                                        baseName: baseName, fields: fields)
                return (did, InboxOutcome.saved)
            } catch {
                return (did, InboxOutcome(refusal: error))
            }
        }
    }

    /// One message's chunk records in `zoneId`: the shared zone's at sending, an inbox's
    /// copy (same names and fields). A small message is one record with its bytes inline.
    static func saveCopy(_ ciphertext: [UInt8], hash: String, to zones: any ZoneStore, zoneId: String,
                         baseName: String, fields: ZoneRecordFields) async throws {
        if ciphertext.count <= ZoneLimits.inlineAssetBytes {
            _ = try await zones.saveRecords(zoneId: zoneId, [inlineRecord(ciphertext, hash: hash, baseName: baseName, fields: fields)])
        } else {
            _ = try await ZoneChunker().upload(ciphertext, to: zones, zoneId: zoneId, baseName: baseName,
                                               recordType: "change", fields: fields)
        }
    }

    /// A message small enough to travel inline as its one chunk record.
    static func inlineRecord(_ ciphertext: [UInt8], hash: String, baseName: String, fields: ZoneRecordFields) -> ZoneRecordDraft {
        var chunk = fields
        (chunk.chunkIndex, chunk.chunkCount, chunk.payloadHash) = (0, 1, hash)
        return ZoneRecordDraft(recordName: ZoneChunker.recordName(baseName: baseName, index: 0), recordType: "change",
                               fields: chunk, asset: .inline(ciphertext))
    }

    /// The ciphertext of message `seq` as a receiver gets it: from this member's inbox when
    /// it reads one (the copy is then deleted there, once the pull is durable), else, or when
    /// the copy is not there, from the shared zone.
    func receivePayload(seq: Int, hash: String) async throws -> [UInt8]? {
        if readsInbox {
            let inbox = MailboxPolicy.inbox(of: did)
            do {
                if let chunks = try await Self.payloadChunks(seq: seq, convoId: convoId, account: account, zoneId: inbox) {
                    let ciphertext = try await chunks.assemble(from: account.zones, zoneId: inbox)
                    inboxRead += chunks.records.map(\.recordName)
                    return ciphertext
                }
            } catch let error as ZoneError where error.code == .zoneNotFound || error.code == .forbidden {
                // No inbox (yet): the shared zone has every message.
            }
        }
        return try await fetchPayload(seq: seq, hash: hash)
    }

    /// Deletes the inbox copies this pull read, after what they carried is durable, as many
    /// names per request as a zone takes.
    func clearReadInbox() async throws {
        guard !inboxRead.isEmpty else { return }
        let inbox = MailboxPolicy.inbox(of: did), names = inboxRead
        inboxRead = []
        for start in stride(from: 0, to: names.count, by: ZoneLimits.maximumBatchRecords) {
            let part = Array(names[start..<min(start + ZoneLimits.maximumBatchRecords, names.count)])
            _ = try await account.zones.deleteRecords(zoneId: inbox, names: part)
        }
    }
}
