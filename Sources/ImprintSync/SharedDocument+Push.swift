import Crypto
import Foundation
import ImprintCRDT
import ImprintDelivery
import ImprintEncoding
import ImprintFiles
import ImprintMLS
import ImprintZones

/// What a `push` did.
public struct PushReport: Sendable, Hashable {
    /// Changes sent (0 when there was nothing new).
    public var changes: Int
    /// The seq the Delivery Service gave the message, if one was sent.
    public var seq: Int?
    /// Ciphertext bytes stored in the zone (of the change set).
    public var bytes: Int
    /// Assets uploaded and announced to the group by this push.
    public var assets = 0
}

extension SharedDocument {
    /// Sends every local change the group has not seen: the edits made in the bundle since the
    /// last push (by this process or any other writing this device's log), plus changes a
    /// newer member's snapshot lacked; and the bundle's assets the group does not have yet
    /// (encrypted, uploaded as `attachment` records, their keys announced). Catches up first
    /// when the epoch moved on.
    @discardableResult
    public func push() async throws -> PushReport {
        try await exclusive { try await pushNow() }
    }

    func pushNow() async throws -> PushReport {
        try ensureActive()
        try await ensureInbox()
        try await finishOutbox()
        try await sendOwedSnapshot()
        try reloadBundleIfChanged()
        let assets = try await inCurrentEpoch(or: "the epoch kept moving while pushing") { try await shareNewAssets() }
        return try await inCurrentEpoch(or: "the epoch kept moving while pushing") {
            let heads = bundle.document.currentHeads
            let known = try bundle.document.heads(of: state.sharedHeads.compactMap(ChangeHash.init(hex:)))
            var unsent = excludingPreviewed(bundle.document.changes(since: known))
            let resend = Set(state.resend)
            if !resend.isEmpty {
                let have = Set(unsent.map(\.hash))
                unsent += bundle.document.allChanges().filter { resend.contains($0.hash.hex) && !have.contains($0.hash) }
            }
            guard !unsent.isEmpty else { return PushReport(changes: 0, seq: nil, bytes: 0, assets: assets) }
            previewBeforePushing(unsent)
            let (seq, size) = try await send(SyncPayload(kind: .changes, body: ChangeSet.encode(unsent)), heads: heads)
            if !state.resend.isEmpty {
                state.resend = []
                try saveState()
            }
            return PushReport(changes: unsent.count, seq: seq, bytes: size, assets: assets)
        }
    }

    /// Encrypts `payload` in the current epoch and delivers it through the outbox. Returns
    /// the seq and the ciphertext size.
    func send(_ payload: SyncPayload, heads: [ChangeHash]) async throws -> (seq: Int, size: Int) {
        try ensureNotStale()
        var keys = try reservedSendingKeys()
        defer { sendingKeys = keys }  // a key taken is spent, even if encrypting then failed
        let message = try group.encrypt(payload.encoded(), authenticatedData: authenticatorTag, using: &keys)
        let ciphertext = message.tlsBytes
        var random = SystemRandomNumberGenerator()
        let outgoing = OutboxMessage(clientMessageId: Hex.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }),
                                     convoId: convoId, epoch: group.epoch, hash: Hex.encode(SHA256.hash(data: ciphertext)),
                                     heads: heads.map(\.hex), ciphertext: ciphertext)
        try outgoing.write(home: home)
        return (try await deliver(outgoing), ciphertext.count)
    }

    /// The reservation the next message is encrypted with: the current one while it has keys
    /// for this epoch; otherwise a new one, twice the last (up to `sendingKeysAhead`), whose
    /// advanced ratchet is committed to the key store before this returns. So the stored
    /// ratchet is past every key in use before any ciphertext exists: a restart, or another
    /// process on this home, never encrypts with one of them.
    func reservedSendingKeys() throws -> ApplicationKeyReservation {
        if let keys = sendingKeys, keys.remaining > 0, keys.epoch == group.epoch, keys.groupID == group.groupID {
            return keys
        }
        sendingKeys = nil
        let count = min(max(1, account.options.sendingKeysAhead), MLSGroup.maximumReservedApplicationKeys, max(1, lastReservation * 2))
        var advanced = group
        let keys = try advanced.reserveApplicationKeys(count)
        group = advanced
        try saveGroup()
        lastReservation = count
        sendingKeys = keys
        return keys
    }

    /// Delivers every message left in the outbox by an interrupted send.
    func finishOutbox() async throws {
        for message in try OutboxMessage.pending(home: home, convoId: convoId, limit: account.options.maximumPayloadBytes + (1 << 20)) {
            do {
                _ = try await deliver(message)
            } catch let error as DeliveryServiceError where error.name == "EpochMismatch" {
                continue // dropped by deliver; its changes go out again at the next push
            }
        }
        try await deliverInboxCopies()
    }

    /// `sendMessage` (idempotent: the message's id keeps its seq across retries, so nothing
    /// needs saving between the two steps), then the chunk records, then the message is done.
    /// A message of an epoch that has ended is dropped (its changes are still unsent and go
    /// out in the new epoch).
    func deliver(_ message: OutboxMessage) async throws -> Int {
        let sent: SendMessageOutput
        do {
            sent = try await account.delivery.sendMessage(SendMessageInput(
                convoId: convoId, epoch: Int(message.epoch), messageType: .app, hash: message.hash, size: message.ciphertext.count,
                clientMessageId: message.clientMessageId))
        } catch let error as DeliveryServiceError where error.name == "EpochMismatch" {
            message.remove(home: home)
            throw error
        }
        let seq = sent.seq
        state.lastSentSeq = max(state.lastSentSeq, seq)
        let base = Self.recordBase(convoId: convoId, seq: seq)
        let fields = ZoneRecordFields(convoId: convoId, epoch: Int64(message.epoch), seq: Int64(seq))
        try await Self.saveCopy(message.ciphertext, hash: message.hash, to: account.zones, zoneId: zoneId, baseName: base, fields: fields)
        let delivered = message.heads.compactMap(ChangeHash.init(hex:)) + state.sharedHeads.compactMap(ChangeHash.init(hex:))
        state.sharedHeads = try bundle.document.heads(of: delivered.filter { bundle.document.contains($0) }).map(\.hex)
        try saveState()
        try await queueInboxCopies(seq: seq, epoch: message.epoch, hash: message.hash, recipients: sent.recipients,
                                   ciphertext: message.ciphertext)
        message.remove(home: home)
        return seq
    }

    /// Refuses to send from a copy of a home whose identity another copy also uses.
    func ensureNotStale() throws(SyncError) {
        if let reason = state.staleReason { throw SyncError(.staleState, reason) }
    }

    /// The base name of the chunk records of message `seq`: chunk `i` is `<base>.<i>`.
    static func recordBase(convoId: String, seq: Int) -> String { "\(convoId)-\(seq)" }

    // MARK: Snapshots

    /// Sends the whole document in the current epoch, for members who joined in it, then the
    /// keys of every asset shared so far. Owed until both are delivered (a crash in between
    /// sends both again; members drop what they already have).
    ///
    /// The snapshot is then marked as a checkpoint with the Delivery Service (v1.3): once every
    /// active member has processed it, the change sets before it can be compacted away. A
    /// crash before the mark leaves an unmarked snapshot, which only delays compaction.
    /// Returns the snapshot's seq.
    @discardableResult
    func sendSnapshot() async throws -> Int {
        let heads = bundle.document.currentHeads
        // A document with redacted history (joined as current state only) saves redacted
        // whatever it is asked: it has no deleted text to give.
        let saved = state.currentStateOnly ? try bundle.document.save(history: .redacted) : bundle.document.save()
        let content = SnapshotContent(documentID: bundle.metadata.documentID, admins: state.admins, heads: heads,
                                      document: saved, mailboxThreshold: state.mailboxThreshold,
                                      currentStateOnly: state.currentStateOnly)
        let (seq, _) = try await send(SyncPayload(kind: .snapshot, body: content.encoded), heads: heads)
        // The asset keys follow the snapshot: a member who joined in this epoch can read no older message.
        try await sendKnownAssets()
        state.snapshotOwed = false
        try saveState()
        try await markCheckpoint(seq)
        return seq
    }

    /// Tells the Delivery Service that snapshot `seq` holds the whole document. Best effort,
    /// like `acknowledgeProcessed`: a refusal (a service without v1.3) only means the zone
    /// keeps what it would have compacted.
    func markCheckpoint(_ seq: Int) async throws {
        do {
            try await account.delivery.markCheckpoint(convoId: convoId, seq: seq)
        } catch is DeliveryServiceError {
            return
        }
    }

    /// Sends the snapshot an Add commit of this member's still owes (after a crash).
    func sendOwedSnapshot() async throws {
        if state.snapshotOwed { try await sendSnapshot() }
    }
}

