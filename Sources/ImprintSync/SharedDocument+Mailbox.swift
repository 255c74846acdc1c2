import Foundation
import ImprintDelivery
import ImprintMLS
import ImprintZones

/// Mailbox delivery: a copy of every message goes into each recipient's inbox zone
/// `inbox_<did>` when that recipient registered storage of its own (`registerStorage`: an
/// inbox on its own zone server, or on the document's), or when the group has more members
/// than the document's threshold (`share(…, mailboxThreshold:)`, `imprint share
/// --mailbox-threshold N`) or than its zone store's participant limit
/// (`ZoneStore.participantLimit`); recipients read their inbox first.
///
/// The shared zone is still written once per message: joiners start from it, compaction works
/// on it, and a recipient whose inbox copy is missing (or whose inbox server is down) falls
/// back to it. So the inbox is an additional path, not a replacement, and a switch in either
/// direction (members joining or leaving across the threshold, the threshold changing, a
/// member registering storage) loses nothing; receivers handle each seq once, whichever zone
/// it came from (the Delivery Service's order is the only order). What the inbox is for: a
/// store that cannot share one zone with everyone (CloudKit shares stop at 100
/// participants), and members who keep their records with a provider of their own.
enum MailboxPolicy {
    /// Whether a document of `members` members (the sender included) delivers to inboxes:
    /// past its threshold, or past the participant limit its zone store declares.
    static func applies(threshold: Int?, limit: Int? = nil, members: Int) -> Bool {
        guard let bound = [threshold, limit].compactMap({ $0 }).min() else { return false }
        return members > bound
    }

    static func inbox(of did: String) -> String { "inbox_\(did)" }

    /// Chunked copies (messages over the inline limit) go to at most this many inboxes at a
    /// time, so one slow inbox never holds the others and a group of hundreds does not open
    /// hundreds of connections. Small copies go in one `saveToInboxes` request per server.
    static let parallelSaves = 8

    /// A copy that failed this many times is given up (its recipient reads the shared zone).
    static let maximumAttempts = 20

    /// On a recipients' own server a large message's chunks are uploaded once, into one
    /// recipient's inbox, and every inbox there references them. The inboxes are tried in DID
    /// order, at most this many, when one does not exist or refuses (its owner deleted it, or
    /// has not registered this epoch's capability yet); only past that does each inbox get
    /// its own upload.
    static let uploadHolderAttempts = 3

    /// Who of `recipients` gets a copy of a message, by server: nil is the document's server
    /// (`serverURL`), other endpoints are recipients' own. A recipient that registered a
    /// `zone-http` endpoint gets one always; the others only past the threshold.
    static func copies(for recipients: [Recipient], threshold: Int?, limit: Int?,
                       serverURL: String) -> [(endpoint: String?, dids: [String])] {
        let home = StorageRegistration.canonical(serverURL)
        let pastThreshold = applies(threshold: threshold, limit: limit, members: recipients.count + 1)
        var onHome: [String] = [], elsewhere: [String: [String]] = [:]
        for recipient in recipients {
            if recipient.storage.type == "zone-http", let endpoint = recipient.storage.endpoint.map(StorageRegistration.canonical) {
                if endpoint == home { onHome.append(recipient.did) } else { elsewhere[endpoint, default: []].append(recipient.did) }
            } else if pastThreshold {
                onHome.append(recipient.did)
            }
        }
        return (onHome.isEmpty ? [] : [(nil, onHome)]) + elsewhere.keys.sorted().map { ($0, elsewhere[$0]!) }
    }
}

/// Where one server's inbox copies go: its zone client and, for a server of the recipients'
/// own, the inbox write capability of each recipient in the sender's current epoch.
struct InboxTarget: Sendable {
    var zones: any ZoneStore
    /// The client that presents capabilities (recipients' own servers only).
    var foreign: HTTPZoneStore?
    var capabilities: [String: String] = [:]

    /// The client that writes into `did`'s inbox.
    func zones(for did: String) -> any ZoneStore {
        guard let foreign else { return zones }
        return foreign.presenting(inboxCapability: capabilities[did])
    }
}

extension SharedDocument {
    /// Whether this member reads an inbox: it registered storage of its own, or the document
    /// is past its threshold as this member's group has it.
    var readsInbox: Bool {
        account.storage?.endpoint != nil
            || MailboxPolicy.applies(threshold: state.mailboxThreshold, limit: account.zones.participantLimit, members: group.members.count)
    }

    /// The zone client of the server this member's inbox is on.
    func ownInboxZones() async throws -> any ZoneStore {
        guard let endpoint = account.foreignInboxEndpoint else { return account.zones }
        return try await account.endpoints.store(at: endpoint)
    }

    /// Creates this member's inbox zone once it reads one (idempotent) and, on a server of its
    /// own, registers the current epoch's write capability there (`InboxCapability`), which
    /// revokes the previous epoch's. A server of its own that is down is tried again at the
    /// next pull: meanwhile senders keep their copies and this member reads the shared zone.
    func ensureInbox() async throws {
        guard readsInbox else { return }
        let inbox = MailboxPolicy.inbox(of: did)
        if let endpoint = account.foreignInboxEndpoint {
            do {
                let zones = try await account.endpoints.store(at: endpoint)
                if state.inboxEndpoint != endpoint {
                    do {
                        _ = try await zones.createZone(inbox, convoId: nil)
                    } catch let error as ZoneError where error.code == .zoneExists {}
                    state.inboxEndpoint = endpoint
                    try saveState()
                }
                let registered = "\(endpoint) \(group.epoch)"
                if state.inboxCapabilityRegistered != registered {
                    let keyHash = InboxCapability.keyHash(try inboxCapability(of: did))
                    try await zones.putInboxCapability(zoneId: inbox, name: convoId, keyHash: keyHash)
                    state.inboxCapabilityRegistered = registered
                    try saveState()
                }
            } catch let error as ZoneError where error.code == .transport {
                return
            }
            return
        }
        guard !state.inboxCreated else { return }
        do {
            _ = try await account.zones.createZone(inbox, convoId: nil)
        } catch let error as ZoneError where error.code == .zoneExists {
            // Made by an earlier run, or for another document: one inbox per identity.
        }
        state.inboxCreated = true
        try saveState()
    }

    /// Queues the inbox copies of message `seq` for those of `recipients` who get one
    /// (`MailboxPolicy.copies`) and saves them; `ciphertext` is the message, at hand right
    /// after sending. Copies that fail stay queued in the sync state and are retried from the
    /// shared zone's record at the next push or pull.
    func queueInboxCopies(seq: Int, epoch: UInt64, hash: String, recipients: [Recipient], ciphertext: [UInt8]) async throws {
        let copies = MailboxPolicy.copies(for: recipients, threshold: state.mailboxThreshold, limit: account.zones.participantLimit,
                                          serverURL: account.serverURL)
        guard !copies.isEmpty else { return }
        for copy in copies {
            state.inboxPending.append(SyncState.InboxDelivery(seq: seq, epoch: epoch, hash: hash, dids: copy.dids, endpoint: copy.endpoint))
        }
        try saveState()
        try await deliverInboxCopies(known: [seq: ciphertext])
    }

    /// What became of one inbox copy.
    enum InboxOutcome: Sendable {
        case saved, gone, failed

        /// A refusal by an inbox that does not exist is final, and so is one by an inbox on
        /// the document's server that will not take this member's copies (the recipient left).
        /// A server of the recipient's own refuses a capability it has not registered yet (the
        /// recipient has not seen the new epoch): tried again. Anything else is retried.
        init(refusal error: any Error, foreign: Bool) {
            guard let zone = error as? ZoneError,
                  zone.code == .zoneNotFound || (zone.code == .forbidden && !foreign) else {
                self = .failed
                return
            }
            self = .gone
        }
    }

    /// Withdraws this document's write capability from this member's own server once its
    /// membership ended (left or removed): the last epoch's members, whoever they are now,
    /// can no longer append. Best effort: a server that is down keeps it until the owner
    /// registers storage again or deletes the inbox.
    func withdrawInboxCapability() async {
        guard let endpoint = account.foreignInboxEndpoint, state.inboxCapabilityRegistered != nil,
              let zones = try? await account.endpoints.store(at: endpoint) else { return }
        do {
            try await zones.putInboxCapability(zoneId: MailboxPolicy.inbox(of: did), name: convoId, keyHash: nil)
            state.inboxCapabilityRegistered = nil
            try saveState()
        } catch {
            return
        }
    }

    /// The write capability of `owner`'s inbox on a server of its own, in this member's epoch.
    func inboxCapability(of owner: String) throws -> String { try InboxCapability.value(for: owner, in: group) }

    /// One message's copies for one server's recipients, in one fan-out (`saveToInboxes`, as
    /// many requests as its limits need): a small message inline, a large one as chunk records
    /// whose assets that server holds once. Inboxes the fan-out cannot serve that way get the
    /// chunks uploaded, eight inboxes at a time.
    static func saveCopies(_ ciphertext: [UInt8], delivery: SyncState.InboxDelivery, convoId: String,
                           target: InboxTarget) async throws -> [(String, InboxOutcome)] {
        let baseName = recordBase(convoId: convoId, seq: delivery.seq)
        let fields = ZoneRecordFields(convoId: convoId, epoch: Int64(delivery.epoch), seq: Int64(delivery.seq))
        let foreign = target.foreign != nil
        if ciphertext.count <= ZoneLimits.inlineAssetBytes {
            let draft = inlineRecord(ciphertext, hash: delivery.hash, baseName: baseName, fields: fields)
            let results: [InboxSaveResult]
            do {
                results = try await target.zones.saveToInboxes(delivery.dids.map {
                    InboxSave(zoneId: MailboxPolicy.inbox(of: $0), records: [draft], capability: target.capabilities[$0])
                })
            } catch {
                return delivery.dids.map { ($0, .failed) }  // the request itself failed: every copy is retried
            }
            let byZone = Dictionary(results.map { ($0.zoneId, $0) }, uniquingKeysWith: { first, _ in first })
            return delivery.dids.map { did in
                guard let result = byZone[MailboxPolicy.inbox(of: did)] else { return (did, .failed) }
                guard let error = result.error else { return (did, .saved) }
                return (did, InboxOutcome(refusal: error, foreign: foreign))
            }
        }
        // A large message: its chunks' assets reach the server once and every inbox's records
        // reference them (v1.4). On the document's server the sender's own shared-zone records
        // hold them already; on a recipients' server they are uploaded once, into one inbox
        // (`uploadOnce`).
        var outcomes: [String: InboxOutcome] = [:]
        var oneByOne = delivery.dids
        if !delivery.dids.isEmpty {
            let chunks = try ZoneChunker().chunks(of: ciphertext, baseName: baseName, recordType: "change", fields: fields)
            do {
                if foreign {
                    let upload = try await uploadOnce(chunks.map { Array($0.bytes) }, candidates: delivery.dids) { did, bytes in
                        _ = try await target.zones(for: did).uploadAsset(zoneId: MailboxPolicy.inbox(of: did), bytes: bytes)
                    }
                    outcomes.merge(upload.refused) { first, _ in first }
                    guard upload.holder != nil else { throw ZoneError(.assetNotFound, "no inbox took the chunks") }
                }
                let drafts = chunks.map(\.draft)
                let results = try await target.zones.saveToInboxes(delivery.dids.filter { outcomes[$0] == nil }.map {
                    InboxSave(zoneId: MailboxPolicy.inbox(of: $0), records: drafts, capability: target.capabilities[$0])
                })
                let byZone = Dictionary(results.map { ($0.zoneId, $0) }, uniquingKeysWith: { first, _ in first })
                oneByOne = []
                for did in delivery.dids where outcomes[did] == nil {
                    guard let result = byZone[MailboxPolicy.inbox(of: did)] else {
                        outcomes[did] = .failed
                        continue
                    }
                    guard let error = result.error else {
                        outcomes[did] = .saved
                        continue
                    }
                    switch error.code {
                    // A server before v1.4, a store without the rule, or an asset no longer held
                    // (the shared zone's copy compacted): this inbox gets the chunks uploaded.
                    case .assetNotFound, .invalidArgument: oneByOne.append(did)
                    default: outcomes[did] = InboxOutcome(refusal: error, foreign: foreign)
                    }
                }
            } catch {
                oneByOne = delivery.dids.filter { outcomes[$0] == nil }
            }
        }
        let uploaded = try await concurrentMap(oneByOne, width: MailboxPolicy.parallelSaves) { did in
            do {
                try await saveCopy(ciphertext, hash: delivery.hash, to: target.zones(for: did), zoneId: MailboxPolicy.inbox(of: did),
                                   baseName: baseName, fields: fields)
                return (did, InboxOutcome.saved)
            } catch {
                return (did, InboxOutcome(refusal: error, foreign: foreign))
            }
        }
        for (did, outcome) in uploaded { outcomes[did] = outcome }
        return delivery.dids.map { ($0, outcomes[$0] ?? .failed) }
    }

    /// Uploads a large message's chunk `assets` once to a recipients' own server, into the
    /// inbox of the first of `candidates` (in DID order, at most
    /// `MailboxPolicy.uploadHolderAttempts`) that takes them. Returns that holder (nil when
    /// every candidate tried refused) and the outcome of each candidate that refused: an inbox
    /// that does not exist is `.gone`, one that refuses the capability `.failed` (retried
    /// later). Throws when an upload fails otherwise (the server did not answer).
    static func uploadOnce(_ assets: [[UInt8]], candidates: [String],
                           upload: (String, [UInt8]) async throws -> Void) async throws -> (holder: String?, refused: [String: InboxOutcome]) {
        var refused: [String: InboxOutcome] = [:]
        for did in candidates.sorted().prefix(MailboxPolicy.uploadHolderAttempts) {
            do {
                for bytes in assets { try await upload(did, bytes) }
                return (did, refused)
            } catch let error as ZoneError where error.code == .zoneNotFound || error.code == .forbidden {
                refused[did] = InboxOutcome(refusal: error, foreign: true)
            }
        }
        return (nil, refused)
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
    ///
    /// Whatever a zone holds must be the ciphertext the Delivery Service sequenced: its SHA-256
    /// is `hash` (when the hash is known). Any member, or anyone holding a stale inbox
    /// capability, can append to an inbox, so a copy that is not the message (planted under
    /// the name of a seq to come) is counted in `rejectedInboxCopies`, deleted with the copies
    /// read, and the message is read from the shared zone instead: the pull goes on. A shared
    /// zone record that is not the message is an error (`SyncError.Code.invalidPayload`).
    func receivePayload(seq: Int, hash: String) async throws -> [UInt8]? {
        if readsInbox, !inboxUnreachable {
            let inbox = MailboxPolicy.inbox(of: did)
            do {
                let zones = try await ownInboxZones()
                if let chunks = try await Self.payloadChunks(seq: seq, convoId: convoId, account: account, zoneId: inbox, zones: zones) {
                    inboxRead += chunks.records.map(\.recordName)
                    if Self.isSequenced(chunks, hash: hash) {
                        do {
                            return try await chunks.assemble(from: zones, zoneId: inbox)
                        } catch let error as ZoneError where error.code == .transport {
                            throw error
                        } catch {
                            // Chunks that do not make their payload: not the message.
                        }
                    }
                    rejectedInboxCopies += 1
                }
            } catch let error as ZoneError where error.code == .zoneNotFound || error.code == .forbidden {
                // No inbox (yet): the shared zone has every message.
            } catch let error as ZoneError where error.code == .transport {
                // The inbox's server is down: the shared zone has every message; the inbox is
                // not asked again in this pull.
                inboxUnreachable = true
            } catch let error as SyncError where error.code == .invalidPayload {
                // Records that do not make a message (an impossible chunk count, say): not
                // the message either.
                rejectedInboxCopies += 1
            }
        }
        return try await fetchPayload(seq: seq, hash: hash)
    }

    /// Whether `chunks` carry the message whose SHA-256 hex the Delivery Service gave as
    /// `hash` (true when no hash is known: a gap recorded by an older version). Their payload
    /// hash is all there is to compare: reading them checks every byte against it
    /// (`PayloadChunks.assemble`), so nothing is hashed twice.
    static func isSequenced(_ chunks: PayloadChunks, hash: String) -> Bool {
        hash.count != 64 || chunks.payloadHash == hash.lowercased()
    }

    /// Deletes the inbox copies this pull read, after what they carried is durable, as many
    /// names per request as a zone takes.
    /// A server of its own that does not answer keeps them for the next pull's end.
    func clearReadInbox() async throws {
        guard !inboxRead.isEmpty else { return }
        let inbox = MailboxPolicy.inbox(of: did)
        do {
            let zones = try await ownInboxZones()
            while !inboxRead.isEmpty {
                let part = Array(inboxRead.prefix(ZoneLimits.maximumBatchRecords))
                _ = try await zones.deleteRecords(zoneId: inbox, names: part)
                inboxRead.removeFirst(part.count)
            }
        } catch let error as ZoneError where error.code == .transport {
            return
        }
    }
}

extension SharedDocument {
    /// Deletes the copies in this member's inbox that it no longer needs: those of seqs it has
    /// processed from the shared zone instead (the copy landed after the pull that read the
    /// shared zone, or while this member's server was down). It reads the inbox's changes
    /// since the last sweep (one request when nothing is new), remembers copies of seqs not
    /// processed yet, and deletes every remembered copy the cursor has passed. Without it, a
    /// member who often reads ahead of its inbox would fill it (and its quota) with copies
    /// nobody reads.
    func sweepInbox() async throws {
        guard readsInbox, !inboxUnreachable else { return }
        let inbox = MailboxPolicy.inbox(of: did), prefix = convoId + "-"
        let zones: any ZoneStore
        do {
            zones = try await ownInboxZones()
        } catch let error as ZoneError where error.code == .transport {
            return
        }
        let before = (state.inboxSweepToken, state.inboxAhead)
        defer { if state.inboxSweepToken != before.0 || state.inboxAhead != before.1 { try? saveState() } }
        var token = state.inboxSweepToken.map(ZoneChangeToken.init(rawValue:))
        do {
            while true {
                let batch: ZoneChangeBatch
                do {
                    batch = try await zones.fetchChanges(zoneId: inbox, since: token, limit: 1000)
                } catch let error as ZoneError where error.code == .changeTokenExpired && token != nil {
                    token = nil  // compacted or recreated: read it from the start
                    continue
                }
                for record in batch.records where record.recordName.hasPrefix(prefix) {
                    if record.deleted {
                        state.inboxAhead[record.recordName] = nil
                    } else if let seq = record.fields.seq {
                        state.inboxAhead[record.recordName] = Int(seq)
                    }
                }
                token = batch.changeToken
                if !batch.moreComing { break }
            }
        } catch let error as ZoneError where [.transport, .zoneNotFound, .forbidden].contains(error.code) {
            return
        }
        state.inboxSweepToken = token?.rawValue
        let passed = state.inboxAhead.filter { $0.value <= Int(cursor.seq) || state.processedAbove.contains($0.value) }.keys.sorted()
        for start in stride(from: 0, to: passed.count, by: ZoneLimits.maximumBatchRecords) {
            let part = Array(passed[start..<min(start + ZoneLimits.maximumBatchRecords, passed.count)])
            do {
                _ = try await zones.deleteRecords(zoneId: inbox, names: part)
            } catch let error as ZoneError where error.code == .transport {
                return
            }
            for name in part { state.inboxAhead[name] = nil }
        }
    }
}
