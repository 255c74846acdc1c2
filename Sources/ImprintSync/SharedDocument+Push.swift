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
    /// Ciphertext bytes stored in the zone.
    public var bytes: Int
}

extension SharedDocument {
    /// Sends every local change the group has not seen: the edits made in the bundle since the
    /// last push (by this process or any other writing this device's log), plus changes a
    /// newer member's snapshot lacked. Catches up first when the epoch moved on.
    @discardableResult
    public func push() async throws -> PushReport {
        try await exclusive { try await pushNow() }
    }

    func pushNow() async throws -> PushReport {
        try ensureActive()
        try await finishOutbox()
        try await sendOwedSnapshot()
        _ = try bundle.reload()
        for _ in 0...account.options.commitRetries {
            let heads = bundle.document.currentHeads
            let known = try bundle.document.heads(of: state.sharedHeads.compactMap(ChangeHash.init(hex:)))
            var unsent = bundle.document.changes(since: known)
            let resend = Set(state.resend)
            if !resend.isEmpty {
                let have = Set(unsent.map(\.hash))
                unsent += bundle.document.allChanges().filter { resend.contains($0.hash.hex) && !have.contains($0.hash) }
            }
            guard !unsent.isEmpty else { return PushReport(changes: 0, seq: nil, bytes: 0) }
            let payload = SyncPayload(kind: .changes, body: ChangeSet.encode(unsent))
            do {
                let (seq, size) = try await send(payload, heads: heads)
                state.resend = []
                try saveState()
                return PushReport(changes: unsent.count, seq: seq, bytes: size)
            } catch let error as DeliveryServiceError where error.name == "EpochMismatch" {
                // Encrypted in an epoch that has ended: catch up, encrypt again in the new one.
                try await pullNow()
            }
        }
        throw SyncError(.conflictRetriesExhausted, "the epoch kept moving while pushing")
    }

    /// Encrypts `payload` in the current epoch and delivers it through the outbox. Returns
    /// the seq and the ciphertext size.
    func send(_ payload: SyncPayload, heads: [ChangeHash]) async throws -> (seq: Int, size: Int) {
        let message = try group.encrypt(payload.encoded(), authenticatedData: authenticatorTag)
        // The advanced ratchet is durable before the ciphertext exists anywhere else.
        try saveGroup()
        let ciphertext = message.tlsBytes
        var random = SystemRandomNumberGenerator()
        let id = Hex.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) })
        let entry = SyncState.OutboxEntry(clientMessageId: id, epoch: group.epoch, hash: Hex.encode(SHA256.hash(data: ciphertext)),
                                          size: ciphertext.count, heads: heads.map(\.hex), seq: nil)
        try FileManager.default.createDirectory(atPath: SyncState.directory(home: home) + "/outbox", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try AtomicFile.write(ciphertext, to: SyncState.outboxPath(home: home, clientMessageId: id), mode: 0o600)
        state.outbox.append(entry)
        try saveState()
        return (try await deliver(entry), ciphertext.count)
    }

    /// Delivers every outbox entry left by an interrupted send.
    func finishOutbox() async throws {
        for entry in state.outbox {
            do {
                _ = try await deliver(entry)
            } catch let error as DeliveryServiceError where error.name == "EpochMismatch" {
                continue // dropped by deliver; its changes go out again at the next push
            }
        }
    }

    /// `sendMessage` (idempotent: the entry's id keeps its seq across retries), then the
    /// chunk records, then the entry is done. A message of an epoch that has ended is
    /// dropped (its changes are still unsent and go out in the new epoch).
    func deliver(_ original: SyncState.OutboxEntry) async throws -> Int {
        var entry = original
        let path = SyncState.outboxPath(home: home, clientMessageId: entry.clientMessageId)
        let ciphertext = try AtomicFile.read(path, limit: account.options.maximumPayloadBytes)
        if entry.seq == nil {
            do {
                let sent = try await account.delivery.sendMessage(SendMessageInput(
                    convoId: convoId, epoch: Int(entry.epoch), messageType: .app, hash: entry.hash, size: entry.size,
                    clientMessageId: entry.clientMessageId))
                entry.seq = sent.seq
                updateOutbox(entry)
                try saveState()
            } catch let error as DeliveryServiceError where error.name == "EpochMismatch" {
                removeOutbox(entry)
                try saveState()
                throw error
            }
        }
        let seq = entry.seq!
        _ = try await ZoneChunker().upload(ciphertext, to: account.zones, zoneId: zoneId, baseName: Self.recordBase(convoId: convoId, seq: seq),
                                           recordType: "change",
                                           fields: ZoneRecordFields(convoId: convoId, epoch: Int64(entry.epoch), seq: Int64(seq)))
        let delivered = entry.heads.compactMap(ChangeHash.init(hex:)) + state.sharedHeads.compactMap(ChangeHash.init(hex:))
        state.sharedHeads = try bundle.document.heads(of: delivered.filter { bundle.document.contains($0) }).map(\.hex)
        removeOutbox(entry)
        try saveState()
        return seq
    }

    func updateOutbox(_ entry: SyncState.OutboxEntry) {
        if let index = state.outbox.firstIndex(where: { $0.clientMessageId == entry.clientMessageId }) { state.outbox[index] = entry }
    }

    func removeOutbox(_ entry: SyncState.OutboxEntry) {
        state.outbox.removeAll { $0.clientMessageId == entry.clientMessageId }
        try? FileManager.default.removeItem(atPath: SyncState.outboxPath(home: home, clientMessageId: entry.clientMessageId))
    }

    /// The base name of the chunk records of message `seq`: chunk `i` is `<base>.<i>`.
    static func recordBase(convoId: String, seq: Int) -> String { "\(convoId)-\(seq)" }

    // MARK: Snapshots

    /// Sends the whole document in the current epoch, for members who joined in it.
    func sendSnapshot() async throws {
        let heads = bundle.document.currentHeads
        let content = SnapshotContent(documentID: bundle.metadata.documentID, admins: state.admins, heads: heads,
                                      document: bundle.document.save())
        state.snapshotOwed = false
        _ = try await send(SyncPayload(kind: .snapshot, body: content.encoded), heads: heads)
        try saveState()
    }

    /// Sends the snapshot an Add commit of this member's still owes (after a crash).
    func sendOwedSnapshot() async throws {
        if state.snapshotOwed { try await sendSnapshot() }
    }
}
