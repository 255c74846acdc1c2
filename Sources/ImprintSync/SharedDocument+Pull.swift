import Crypto
import Foundation
import ImprintCRDT
import ImprintDelivery
import ImprintEncoding
import ImprintKeys
import ImprintMLS
import ImprintZones

/// What a `pull` did.
public struct PullReport: Sendable, Hashable {
    /// Messages of other members applied (change sets and snapshots).
    public var messages = 0
    /// Changes the document gained.
    public var changes = 0
    /// Commits processed (membership changes, key updates).
    public var commits = 0
    /// Asset announcements received (the assets themselves are fetched on demand: ``SharedDocument/fetchAsset(_:)``).
    public var assets = 0
    /// Seqs whose records have not reached the zone yet.
    public var gaps: [Int] = []
    /// The epoch after the pull.
    public var epoch: UInt64 = 0
    /// The last seq processed.
    public var seq: Int = 0
    /// Members this pull renewed because they were away longer than
    /// `SyncOptions.renewMembersAwayFor` (admins only).
    public var renewed: [String] = []
}

extension SharedDocument {
    /// Fetches what the others sent, in the Delivery Service's order: commits strictly by
    /// (epoch, seq); application messages as their records arrive, each decrypted, merged and
    /// made durable in the bundle before the cursor passes it. A seq whose record is not in
    /// the zone yet is a gap: later messages of its epoch are still applied, the commit that
    /// ends the epoch waits for it up to `options.gapTimeout`, then goes on and the gap stays
    /// in `status` (its record is applied if it arrives while its epoch's keys are kept).
    @discardableResult
    public func pull() async throws -> PullReport {
        try await exclusive {
            var report = try await pullNow()
            report.renewed = await renewIfDue()
            return report
        }
    }

    func pullNow() async throws -> PullReport {
        if state.endedReason != nil, try await rejoinIfWelcomed() == false { try ensureActive() }
        do {
            return try await pullPages()
        } catch let error as SyncError where error.code == .removed {
            // Removed, and maybe added again at once (`renewMembers`): a new membership in
            // this bundle, then the pull goes on in it.
            try? flushReceived()
            guard try await rejoinIfWelcomed() else {
                await withdrawInboxCapability()
                throw error
            }
            return try await pullPages()
        } catch {
            // What was decrypted before the failure is valid: made durable, then its keys.
            try? flushReceived()
            throw error
        }
    }

    private func pullPages() async throws -> PullReport {
        var report = PullReport()
        try await finishOutbox()
        inboxUnreachable = false
        try await ensureInbox()
        try await sendOwedSnapshot()
        let before = bundle.document.currentHeads
        try reloadBundleIfChanged()
        try await retryGaps(&report)
        var since = cursor.seq
        pages: while true {
            let page: GetMessagesOutput
            do {
                page = try await account.delivery.getMessages(convoId: convoId, sinceSeq: Int(since), limit: 1000)
            } catch let error as DeliveryServiceError where error.status == 403 {
                try endMembership("the Delivery Service no longer lists \(did) as a member (\(error.body.message))")
                throw SyncError(.removed, "\(did) is no longer a member of convo \(convoId)")
            }
            if let first = page.messages.first, first.seq > Int(since) + 1, since == cursor.seq {
                // Messages right after this member's cursor were compacted away: only a member
                // that had left the group can be behind the compaction point.
                try endMembership("messages \(since + 1)–\(first.seq - 1) of convo \(convoId) were compacted while \(did) was not a member")
                throw SyncError(.removed, "\(did) was removed from convo \(convoId) while away")
            }
            for message in try Self.checked(page, after: Int(since)) {
                since = UInt64(message.seq)
                if state.processedAbove.contains(message.seq) { advanceCursor(to: message); continue }
                if state.gaps.contains(where: { $0.seq == message.seq }) { continue } // retried by retryGaps
                switch message.messageType {
                case .commit:
                    if UInt64(message.epoch) < group.epoch { advanceCursor(to: message); receivedUnflushed = true; continue }
                    if try waitsForGaps(epoch: UInt64(message.epoch)) { break pages }
                    // The epoch's application messages are durable before its keys can go.
                    try flushReceived()
                    try await processCommit(message)
                    report.commits += 1
                case .app:
                    if message.sender == did && message.seq > state.lastSentSeq && state.staleReason == nil {
                        try markStale(seq: message.seq)
                    }
                    if UInt64(message.epoch) < state.joinedEpoch || message.sender == did {
                        advanceCursor(to: message)
                        receivedUnflushed = true
                        continue
                    }
                    if try await processApplication(message, report: &report) == false {
                        // A record that is not in the zone yet. `live` often asks a moment
                        // before the sender's save lands, so a gap seen for the first time by
                        // `live` is not written (the cursor stays below it: the next pull finds
                        // it again); one that lasts is, with the time it was first seen, which
                        // the epoch's commit waits on (`waitsForGaps`).
                        let firstSeen = gapsFirstSeen[message.seq]
                        gapsFirstSeen[message.seq] = firstSeen ?? Date()
                        state.gaps.append(SyncState.Gap(seq: message.seq, epoch: UInt64(message.epoch), firstSeen: firstSeen ?? Date(),
                                                        sender: message.sender, hash: message.hash))
                        if !pullingLive || firstSeen != nil { try saveState() }
                    }
                }
            }
            // One durable commit per page, not per message (docs/sync.md, "Receiving").
            try flushReceived()
            guard page.cursor != nil, !page.messages.isEmpty else { break }
        }
        state.lastPull = Date()
        if pullingLive {
            // `live` pulls often and on the path from a keystroke to another screen: the time
            // of the pull waits for the next state write, not a flush of its own.
            try flushReceived()
        } else {
            try saveState()  // flushes anything received first
        }
        try await clearReadInbox()
        try await ensureInbox()  // the commits just processed may have taken the group past the threshold
        try await answerMissingChangeRequests()
        try await requestMissingChanges()
        report.changes = bundle.document.changes(since: before).count
        report.gaps = state.gaps.map(\.seq)
        report.epoch = group.epoch
        report.seq = Int(cursor.seq)
        if state.gaps.isEmpty && (report.commits > 0 || !rosterChecked) {
            try await checkRosterRecordingAlerts()
            rosterChecked = true
        }
        gapsFirstSeen = gapsFirstSeen.filter { $0.key > Int(cursor.seq) }
        if pullingLive {
            acknowledgeInBackground()
            sweepInboxInBackground()
        } else {
            try await acknowledgeProcessed()
            try await sweepInbox()
        }
        return report
    }

    /// A pull for `live`: as `pull()`, but the processed cursor is acknowledged in the
    /// background (`acknowledgeInBackground`) and the pull's time is not flushed on its own,
    /// so neither a request nor an fsync sits between a message's arrival and its display.
    func livePull() async throws -> PullReport {
        try await exclusive {
            pullingLive = true
            defer { pullingLive = false }
            var report = try await pullNow()
            pullingLive = false  // renewing is not on the live path
            report.renewed = await renewIfDue()
            return report
        }
    }

    /// `acknowledgeProcessed` off the caller's path: one request in flight at a time; the
    /// stored cursor is remembered in memory and written with the next state write (a lost
    /// acknowledgement is sent again by a later pull).
    func acknowledgeInBackground() {
        let processed = Int(cursor.seq)
        guard processed > max(state.acknowledgedSeq, acknowledgedInMemory), !acknowledgementInFlight else { return }
        acknowledgementInFlight = true
        let delivery = account.delivery, convoId = convoId
        Task {
            let stored = try? await delivery.updateCursor(convoId: convoId, processedSeq: processed)
            self.acknowledged(stored)
        }
    }

    func acknowledged(_ stored: Int?) {
        acknowledgementInFlight = false
        if let stored {
            acknowledgedInMemory = max(acknowledgedInMemory, stored)
            state.acknowledgedSeq = max(state.acknowledgedSeq, stored)
        }
    }

    /// `sweepInbox` for `live`, after the pull that brought the message, in its own turn of
    /// the operation gate (one at a time).
    func sweepInboxInBackground() {
        guard readsInbox, !sweepInFlight else { return }
        sweepInFlight = true
        Task {
            _ = try? await self.exclusive { try await self.sweepInbox() }
            self.sweepDone()
        }
    }

    func sweepDone() { sweepInFlight = false }

    /// Tells the Delivery Service how far this member has processed (v1.3), once what was
    /// received is durable (the state was saved, which flushes it first): compaction may then
    /// delete what every member is past. Best effort: a failure is tried again at the next
    /// pull, and a service without the method keeps everything.
    func acknowledgeProcessed() async throws {
        let processed = Int(cursor.seq)
        guard processed > state.acknowledgedSeq else { return }
        do {
            state.acknowledgedSeq = try await account.delivery.updateCursor(convoId: convoId, processedSeq: processed)
            try saveState()
        } catch is DeliveryServiceError {
            return
        }
    }

    /// The page's messages after checking what the rest of the client relies on: seqs
    /// ascending above `since`, epochs not negative. A service that answers otherwise gets a
    /// clear error instead of a client that trusts it.
    static func checked(_ page: GetMessagesOutput, after since: Int) throws(SyncError) -> [MessageView] {
        var previous = since
        for message in page.messages {
            guard message.seq > previous, message.epoch >= 0, message.epoch < Int(UInt32.max) else {
                throw SyncError(.invalidPayload, "the Delivery Service returned seq \(message.seq) of epoch \(message.epoch) after seq \(previous)")
            }
            previous = message.seq
        }
        return page.messages
    }

    /// Refuses to run for a membership that ended.
    func ensureActive() throws {
        if let reason = state.endedReason { throw SyncError(.removed, reason) }
    }

    /// Moves the cursor past `message` when every seq below it is processed; otherwise
    /// remembers it as processed out of order.
    func advanceCursor(to message: MessageView) {
        let seq = message.seq
        if UInt64(seq) == cursor.seq + 1 && !state.gaps.contains(where: { $0.seq < seq }) {
            cursor = ProcessedCursor(epoch: group.epoch, seq: UInt64(seq))
            // Messages processed out of order right after it move the cursor along too.
            while state.processedAbove.contains(Int(cursor.seq) + 1) {
                state.processedAbove.removeAll { $0 == Int(cursor.seq) + 1 }
                cursor.seq += 1
            }
        } else if UInt64(seq) > cursor.seq, !state.processedAbove.contains(seq) {
            state.processedAbove.append(seq)
        }
        cursor.epoch = group.epoch
    }

    /// Whether the commit ending `epoch` must wait: a gap of that epoch is younger than the timeout.
    func waitsForGaps(epoch: UInt64) throws -> Bool {
        let limit = account.options.gapTimeout.inSeconds
        return state.gaps.contains { $0.epoch == epoch && Date().timeIntervalSince($0.firstSeen) < limit }
    }

    /// Tries the gaps again: a record that arrived since is applied now.
    func retryGaps(_ report: inout PullReport) async throws {
        guard !state.gaps.isEmpty else { return }
        var seen = Set<Int>()
        for gap in state.gaps.sorted(by: { $0.seq < $1.seq }) where seen.insert(gap.seq).inserted {
            state.gaps.removeAll { $0.seq == gap.seq }
            do {
                if try await processApplication(gap.message, report: &report) == false { state.gaps.append(gap) }
            } catch let error as MLSError where error.code == .wrongEpoch {
                // Its epoch's keys are gone: the change set cannot be read any more. Its
                // sender is asked for what this member lacks (`requestMissingChanges`).
                state.alerts.append("seq \(gap.seq) of epoch \(gap.epoch) arrived after its epoch's keys were deleted")
                if !state.unreadableFrom.contains(gap.sender) { state.unreadableFrom.append(gap.sender) }
                try saveState()
            }
        }
        // What the gaps brought is made durable now; the list itself lives in memory until the
        // next write (after a restart the pull finds the same gaps again below the cursor).
        try flushReceived()
    }

    // MARK: Application messages

    /// Fetches, decrypts and applies one application message. Returns false when its records
    /// are not (all) in the zone yet.
    func processApplication(_ message: MessageView, report: inout PullReport) async throws -> Bool {
        guard let ciphertext = try await receivePayload(seq: message.seq, hash: message.hash) else { return false }
        let mls: MLSMessage
        do {
            mls = try MLSMessage(tlsBytes: ciphertext)
        } catch {
            throw SyncError(.invalidPayload, "seq \(message.seq) is not an MLS message: \(error)")
        }
        guard case let .privateMessage(framed) = mls, framed.groupID == group.groupID else {
            throw SyncError(.invalidPayload, "seq \(message.seq) is not a private message of this group")
        }
        if let mine = state.authenticators[String(framed.epoch)], framed.authenticatedData.count == 16,
           Hex.encode(framed.authenticatedData) != mine {
            let alert = "seq \(message.seq) (from \(message.sender)) was sent in another history of epoch \(framed.epoch): the Delivery Service showed members different histories"
            state.alerts.append(alert)
            try saveState()
            throw SyncError(.forkDetected, alert)
        }
        var next = group
        let processed: ProcessedMessage
        do {
            processed = try next.process(mls)
        } catch let error as MLSError where error.code == .secretConsumed {
            // The same ciphertext sequenced twice (a replay, or a retry a v1 service did not
            // recognise): its content is already here. Dropped.
            advanceCursor(to: message)
            receivedUnflushed = true
            return true
        }
        guard case let .application(data, sender, _) = processed else {
            throw SyncError(.invalidPayload, "seq \(message.seq) is not an application message")
        }
        let roster = try MemberCredential.roster(of: next)
        let author = roster[sender] ?? "leaf \(sender)"
        if let kind = SyncPayload.unknownKind(in: data) {
            // A newer member's kind of message: read (its key is spent) and skipped.
            state.alerts.append("seq \(message.seq) from \(author) is of a kind this version does not know (\(kind)); skipped")
        } else {
            try apply(try SyncPayload(decoding: data), from: author, epoch: framed.epoch, seq: message.seq, report: &report)
        }
        // The key is consumed in memory only: `flushReceived` makes the plaintext durable in
        // the bundle first, then commits this state (once for a whole page of messages).
        group = next
        advanceCursor(to: message)
        receivedUnflushed = true
        report.messages += 1
        return true
    }

    /// Applies one decrypted payload of `author`'s, sequenced at `seq` in `epoch`.
    private func apply(_ payload: SyncPayload, from author: String, epoch: UInt64, seq: Int, report: inout PullReport) throws {
        switch payload.kind {
        case .changes:
            let changes = try ChangeSet.decode(payload.body, maximumBytes: account.options.maximumPayloadBytes)
            try bundle.document.apply(changes)
            remember(received: changes.map(\.hash))
        case .snapshot:
            let content = try SnapshotContent(decoding: payload.body)
            try applySnapshot(content, from: author, epoch: epoch)
        case .assets:
            try remember(announced: try AttachmentAnnouncement(decoding: payload.body).entries, by: author)
            report.assets += 1
        case .syncRequest:
            noteRequest(try MissingChangesRequest(decoding: payload.body), from: author)
        case .syncReply:
            try applyAnswer(try MissingChangesAnswer(decoding: payload.body), from: author, seq: seq)
        case .admins:
            adopt(try AdminList(decoding: payload.body), from: author)
        }
    }

    /// Makes what was received since the last flush durable, in the order the crash rules
    /// need (docs/sync.md): the decrypted changes into the bundle (fsync), then the MLS state
    /// that consumed their keys with the processed cursor (one key-store transaction), then
    /// the sync state. A crash before the second step leaves the old state, which decrypts
    /// the same messages again; the engine drops the changes it already has by hash.
    func flushReceived() throws {
        guard receivedUnflushed else { return }
        try writingToBundle { _ = try bundle.persistNewChanges() }
        try writeGroup()
        try writeState()
        receivedUnflushed = false
    }

    /// Merges a snapshot. A member who already had the document notes its own changes that
    /// the snapshot lacks (sent in an older epoch, which the new members cannot read) and
    /// sends them again at the next push.
    func applySnapshot(_ content: SnapshotContent, from author: String, epoch: UInt64) throws {
        let snapshot = try Document.load(content.document)
        let shared = try bundle.document.heads(of: state.sharedHeads.compactMap(ChangeHash.init(hex:)).filter { bundle.document.contains($0) })
        let alreadySent = Set(bundle.document.allChanges().map(\.hash)).subtracting(bundle.document.changes(since: shared).map(\.hash))
        try bundle.document.merge(snapshot)
        try writingToBundle { _ = try bundle.persistNewChanges() }
        let lacking = bundle.document.changes(since: content.heads.filter { bundle.document.contains($0) }).map(\.hash)
        let resend = lacking.filter { alreadySent.contains($0) }.map(\.hex)
        if !resend.isEmpty { state.resend = Array(Set(state.resend).union(resend)).sorted() }
        // An admin's snapshot carries the policy; none may change who the sharer is.
        if state.admins.isEmpty || (state.admins.contains(author) && content.admins.first == state.admins.first) {
            state.admins = content.admins
            state.mailboxThreshold = content.mailboxThreshold
            state.currentStateOnly = content.currentStateOnly
        }
        remember(received: content.heads)
    }

    /// Joins `received` into what the group has seen.
    func remember(received: [ChangeHash]) {
        let known = (state.sharedHeads.compactMap(ChangeHash.init(hex:)) + received).filter { bundle.document.contains($0) }
        if let heads = try? bundle.document.heads(of: known) { state.sharedHeads = heads.map(\.hex) }
    }

    /// The whole ciphertext of message `seq` (whose hash the Delivery Service gave as
    /// `hash`), or nil if its chunks are not all in the zone. A payload of one chunk is its
    /// record's asset, addressed by that hash: fetched in one request.
    func fetchPayload(seq: Int, hash: String) async throws -> [UInt8]? {
        if hash.count == 64 {
            do {
                return try await account.zones.fetchAsset(zoneId: zoneId, hash: hash)
            } catch let error as ZoneError where error.code == .assetNotFound || error.code == .recordNotFound {
                // Chunked, or not in the zone yet: the records say which.
            }
        }
        return try await Self.fetchPayload(seq: seq, convoId: convoId, account: account, sequencedHash: hash)
    }

    /// The whole ciphertext of message `seq` from the chunk records of `zoneId` (default: the
    /// document's shared zone), or nil if they are not all there. With `sequencedHash`, records
    /// that carry another payload are not the message (`SyncError.Code.invalidPayload`).
    static func fetchPayload(seq: Int, convoId: String, account: SyncAccount, zoneId: String? = nil,
                             sequencedHash: String? = nil) async throws -> [UInt8]? {
        let zoneId = zoneId ?? "doc_\(convoId)"
        guard let chunks = try await payloadChunks(seq: seq, convoId: convoId, account: account, zoneId: zoneId) else { return nil }
        if let sequencedHash, !isSequenced(chunks, hash: sequencedHash) {
            throw SyncError(.invalidPayload,
                            "seq \(seq) in \(zoneId) carries payload \(chunks.payloadHash), not the \(sequencedHash) the Delivery Service sequenced")
        }
        return try await chunks.assemble(from: account.zones, zoneId: zoneId)
    }

    /// The chunk records of message `seq` in `zoneId`, checked, or nil if they are not all there.
    /// `zones` is where `zoneId` lives (the document's server by default).
    static func payloadChunks(seq: Int, convoId: String, account: SyncAccount, zoneId: String,
                              zones: (any ZoneStore)? = nil) async throws -> PayloadChunks? {
        let zones = zones ?? account.zones
        let base = recordBase(convoId: convoId, seq: seq)
        let first: ZoneRecord
        do {
            first = try await zones.record(zoneId: zoneId, named: ZoneChunker.recordName(baseName: base, index: 0))
        } catch let error as ZoneError where error.code == .recordNotFound {
            return nil
        }
        guard let count = first.fields.chunkCount, count >= 1,
              count <= account.options.maximumPayloadBytes / max(1, first.asset.size) + 1 else {
            throw SyncError(.invalidPayload, "seq \(seq): record \(first.recordName) has an impossible chunk count")
        }
        var records = [first]
        for index in 1..<max(1, count) where count > 1 {
            do {
                records.append(try await zones.record(zoneId: zoneId, named: ZoneChunker.recordName(baseName: base, index: index)))
            } catch let error as ZoneError where error.code == .recordNotFound {
                return nil
            }
        }
        let chunks = try PayloadChunks(records: records)
        guard chunks.size <= account.options.maximumPayloadBytes else {
            throw SyncError(.invalidPayload, "seq \(seq) is \(chunks.size) bytes, over the limit")
        }
        return chunks
    }

    // MARK: Commits

    /// Processes a commit of the current epoch: ours (adopt the state we made), or another
    /// member's, checked (committer's role, every leaf's credential) before it is followed.
    func processCommit(_ message: MessageView) async throws {
        guard let bytes = message.commit else {
            throw SyncError(.missingCommit, "seq \(message.seq) is a commit the Delivery Service returned without its bytes")
        }
        let hash = Hex.encode(SHA256.hash(data: bytes))
        if message.sender == did, hash == state.pendingCommitHash,
           let pending = try account.keyStore.groupState(convo: pendingConvo, for: account.identity.did) {
            group = try MLSGroup(serializedState: pending.state)
            try finishOwnCommit(seq: message.seq, addedMembers: state.pendingCommitAdds)
            return
        }
        if message.sender == did {
            // A commit of this DID that is not the one this copy made: another copy of the home.
            try markStale(seq: message.seq)
            throw SyncError(.staleState, state.staleReason ?? "")
        }
        let mls = try MLSMessage(tlsBytes: Array(bytes))
        let committer: UInt32
        switch mls {
        case let .publicMessage(m):
            guard case let .member(leaf) = m.content.sender else {
                throw SyncError(.externalCommit, "seq \(message.seq) is an external commit: members join only through a Welcome")
            }
            committer = leaf
        case .privateMessage:
            committer = UInt32.max // the sender is known only after decryption; checked below
        default:
            throw SyncError(.invalidPayload, "seq \(message.seq) is not a commit")
        }
        let before = try MemberCredential.roster(of: group)
        var next = group
        switch try next.process(mls) {
        case .removed:
            try endMembership("removed from convo \(convoId) by the commit of seq \(message.seq)")
            throw SyncError(.removed, "\(did) was removed from convo \(convoId)")
        case .commit:
            let after = try MemberCredential.roster(of: next)
            let added = Set(after.values).subtracting(before.values)
            let removed = Set(before.values).subtracting(after.values)
            let author = before[committer] ?? message.sender
            if !added.isEmpty || !removed.isEmpty, !state.admins.isEmpty, !state.admins.contains(author) {
                // Only the removal of members who left may come from anyone.
                let active = Set(try await account.delivery.getConvos().convos.first { $0.id == convoId }?.members.map(\.did) ?? [])
                guard added.isEmpty, removed.isDisjoint(with: active) else {
                    let alert = "seq \(message.seq): \(author), not an admin, changed the membership (added \(added.sorted()), removed \(removed.sorted())); refused"
                    state.alerts.append(alert)
                    try saveState()
                    throw SyncError(.forbidden, alert)
                }
            }
        default:
            throw SyncError(.invalidPayload, "seq \(message.seq) is not a commit")
        }
        group = next
        cursor = ProcessedCursor(epoch: group.epoch, seq: UInt64(message.seq))
        state.processedAbove.removeAll { $0 <= message.seq }
        if state.pendingCommitHash != nil {
            // Our own commit of that epoch lost the race: its state is of no use.
            state.pendingCommitHash = nil
            try account.keyStore.deleteGroup(convo: pendingConvo, for: account.identity.did)
        }
        rememberAuthenticator()
        try saveGroup()
        try saveState()
    }

    /// The Delivery Service accepted our commit (seq `seq`): its state becomes the group's.
    func finishOwnCommit(seq: Int, addedMembers: Bool) throws {
        cursor = ProcessedCursor(epoch: group.epoch, seq: UInt64(seq))
        state.processedAbove.removeAll { $0 <= seq }
        state.pendingCommitHash = nil
        state.pendingCommitAdds = false
        if addedMembers { state.snapshotOwed = true }
        rememberAuthenticator()
        try saveGroup()
        try account.keyStore.deleteGroup(convo: pendingConvo, for: account.identity.did)
        try saveState()
    }

    /// Another copy of this home (copied to another machine, or restored from a backup) sent
    /// seq `seq`: both copies hold one MLS state and may encrypt with the same generations.
    /// This copy stops sending (it still reads) until its identity rejoins.
    func markStale(seq: Int) throws {
        let reason = "seq \(seq) was sent by another copy of this home (\(did)), copied or restored from a backup; this copy no longer sends: remove this identity and invite a fresh one"
        state.staleReason = reason
        state.alerts.append(reason)
        try saveState()
    }

    /// This identity is out of the group: its keys for the convo are deleted (forward
    /// secrecy), the reason kept for `status`.
    func endMembership(_ reason: String) throws {
        state.endedReason = reason
        try saveState()
        try account.keyStore.deleteGroup(convo: convoId, for: account.identity.did)
        try? account.keyStore.deleteGroup(convo: pendingConvo, for: account.identity.did)
    }

    /// The roster check after a complete pull; a disagreement is an alert, not a failure of the pull.
    func checkRosterRecordingAlerts() async throws {
        do {
            try await checkRoster()
        } catch let error as SyncError where error.code == .rosterMismatch {
            if state.alerts.last != error.message { state.alerts.append(error.message) }
            state.alerts = Array(state.alerts.suffix(20))
            try saveState()
        }
    }
}
