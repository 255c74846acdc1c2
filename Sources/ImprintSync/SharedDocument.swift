import Crypto
import Foundation
import ImprintBundle
import ImprintCRDT
import ImprintDelivery
import ImprintEncoding
import ImprintFiles
import ImprintKeys
import ImprintMLS
import ImprintStore
import ImprintZones

/// A document kept in a `.imprint` bundle and co-edited, end-to-end encrypted, with the other
/// members of its MLS group, through a shared zone, coordinated by the Delivery Service.
///
/// Data flow (docs/sync.md): local changes → `ChangeSet` (zstd) → padded payload →
/// MLS PrivateMessage of the current epoch → durable outbox → `sendMessage` (an idempotency
/// key, so a retry keeps its seq) → chunk records `<convoId>-<seq>.<i>` in zone
/// `doc_<convoId>`. And back: `getMessages` orders by seq → records → MLS decrypt → changes
/// applied to the document → fsynced in the bundle → MLS state and cursor committed.
///
/// Guarantees:
/// - **No nonce reuse.** The ratchet that encrypted a message is in the key store before the
///   ciphertext is written anywhere; a restart never encrypts twice with one generation. (A
///   run of generations is reserved at once and committed once: `SyncOptions.sendingKeysAhead`.)
/// - **No lost edits.** A change counts as sent only once its record is in the zone; until
///   then it is in the outbox or still unsent, and the next `push` delivers it (after a crash,
///   a lost answer or a lost race for the epoch).
/// - **No lost receipts.** Decrypted changes are durable in the bundle before the cursor that
///   passes them; after a crash in between, the old state decrypts them again and the engine
///   drops the duplicates by hash.
/// - **Membership is MLS's, checked.** Every leaf's credential names a `did:key` whose key is
///   the leaf's signature key; only admins add or remove members; external commits are refused.
///
/// ```swift
/// let account = try await SyncAccount.connect(home: home, keyStore: store, serverURL: url)
/// let doc = try await SharedDocument.share(bundleAt: "paper.imprint", device: device, account: account)
/// try await doc.invite(["did:key:z6Mk…"])
/// try await doc.push()   // after local edits
/// try await doc.pull()   // others' edits, merged into the bundle
/// ```
public actor SharedDocument {
    public nonisolated let account: SyncAccount
    public nonisolated let convoId: String
    /// The bundle the document lives in.
    let bundle: DocumentBundle
    var group: MLSGroup
    var cursor: ProcessedCursor
    var state: SyncState
    /// Whether an operation holds the gate (see `exclusive`), and who waits for it.
    var operationRunning = false
    var waiters: [CheckedContinuation<Void, Never>] = []
    /// Whether the MLS and DS rosters were compared since this object was opened (again
    /// after every commit).
    var rosterChecked = false
    /// The bundle's stamp when this object last read it (see `reloadBundleIfChanged`).
    var seenBundleStamp: [TreeStamp] = []
    /// Whether messages were processed (keys consumed, changes applied in memory) since the
    /// last `flushReceived`.
    var receivedUnflushed = false
    /// The newest presence update delivered per member, and how many were dropped.
    var presenceSeen: [String: Date] = [:]
    var presenceDropped = 0
    /// The records this pull read from this member's inbox (deleted there at its end).
    var inboxRead: [String] = []
    /// Whether this member's inbox server failed to answer in the current pull.
    var inboxUnreachable = false
    /// Inbox copies that were not the message the Delivery Service sequenced (see
    /// `receivePayload`), since this object was opened.
    public internal(set) var rejectedInboxCopies = 0
    /// When this object last looked for members to renew (`renewIfDue`).
    var lastRenewalCheck: Date?
    /// Whether the running pull is one of `live`'s (`livePull`).
    var pullingLive = false
    /// Whether a background acknowledgement of the processed cursor is in flight, and the
    /// highest cursor the Delivery Service stored for this object (the sync state on disk may
    /// not have it yet: operations reload it).
    var acknowledgementInFlight = false
    var acknowledgedInMemory = 0
    /// When this object first saw each gap that `live` has not written yet.
    var gapsFirstSeen: [Int: Date] = [:]
    /// Whether a background `sweepInbox` is queued or running.
    var sweepInFlight = false
    /// Application keys reserved for this member's next messages, in memory only (the stored
    /// group state is past all of them), and the size of the last reservation (see `send`).
    var sendingKeys: ApplicationKeyReservation?
    var lastReservation = 0
    /// Previews (`SharedDocument+Preview`): this member's in flight; the changes merged from
    /// the others' (with when), which this member leaves to their authors for a while; counts.
    var previewsInFlight = 0
    /// This member's changes relayed as previews and not pushed yet, and the epoch they were
    /// sealed in.
    var relayedPreviews: Set<ChangeHash> = []
    var relayedPreviewsEpoch: UInt64 = 0
    /// When `previewed` was last pruned.
    var previewedPrunedAt = ContinuousClock.now
    /// What the stored sync state and MLS state last written or read by this object decode
    /// to (`reloadPersistedState`).
    var persistedState = DecodeMemo<SyncState>()
    var persistedGroup = DecodeMemo<MLSGroup>()
    var previewed: [ChangeHash: ContinuousClock.Instant] = [:]
    /// The current epoch's members, read once per epoch (`currentRoster`).
    var epochRoster: EpochRoster?
    /// Requests for missing changes this member was asked to answer, by requester, answered
    /// at the end of the pull that read them (`SharedDocument+MissingChanges`).
    var missingChangesAsked: [String: [UInt8]] = [:]
    var previewsApplied = 0
    var previewsDropped = 0
    /// The ephemeral socket `live` holds open (`SharedDocument+EphemeralChannel`), if any.
    var ephemeralChannel: EphemeralChannel?
    /// The seqs carried by the courier on its way to each server with inbox copies, by
    /// `courierKey` (`SharedDocument+InboxCouriers`).
    var inboxCouriers: [String: Set<Int>] = [:]
    /// For each courier a push stopped waiting for: the task that records its outcome when it
    /// arrives (`finishInboxCopies` waits for them).
    var lateCouriers: [String: Task<Void, Never>] = [:]

    init(account: SyncAccount, bundle: DocumentBundle, group: MLSGroup, cursor: ProcessedCursor, state: SyncState) {
        self.account = account
        self.convoId = state.convoId
        self.bundle = bundle
        self.bundlePath = bundle.store.layout.root
        self.seenBundleStamp = [TreeStamp.take(bundlePath + "/changes"), TreeStamp.take(bundlePath + "/snapshots")]
        self.group = group
        self.cursor = cursor
        self.state = state
    }

    /// The zone the document's records live in.
    nonisolated var zoneId: String { "doc_\(convoId)" }
    /// The bundle's path.
    public nonisolated let bundlePath: String
    var did: String { account.did }
    var home: String { account.home.path }

    /// Patches for every change the document takes from now on: this member's edits through
    /// ``edit(_:)`` and the other members' changes as they are merged. Bind an editor's view to
    /// it; a batch's `origin` is `.remote` for what came from the group.
    ///
    /// A remote batch is published the moment its changes are merged, before they are made
    /// durable: a pull decrypts and merges a page of messages, then fsyncs the bundle and
    /// commits the MLS state (docs/sync.md, "Receiving"). If the process dies in between, the
    /// view showed changes the bundle does not hold yet; the next pull decrypts the same
    /// messages again from the old state and merges them again, so nothing shown is lost.
    ///
    /// ```swift
    /// let doc = try await SharedDocument.open(bundleAt: "paper.imprint", device: device, account: account)
    /// Task {
    ///     for await batch in await doc.patches() where batch.origin == .remote {
    ///         for patch in batch.patches { editorView.apply(patch) }
    ///     }
    /// }
    /// for try await _ in doc.live() {}
    /// ```
    public func patches(bufferingPolicy: AsyncStream<PatchBatch>.Continuation.BufferingPolicy = .unbounded) -> AsyncStream<PatchBatch> {
        bundle.document.patches(bufferingPolicy: bufferingPolicy)
    }

    /// The body text as this member has it now.
    public func text() throws -> String { try bundle.text() }

    /// The convo a bundle is shared through and the server, from its metadata.json, or nil.
    public static func link(ofBundleAt path: String) throws -> (convoId: String, server: String)? {
        let metadata = try BundleMetadata.read(at: path + "/" + BundleLayout.metadataName)
        guard case let .object(shared)? = metadata.extra[Self.metadataKey],
              case let .string(convo)? = shared["convoId"], case let .string(server)? = shared["server"] else { return nil }
        return (convo, server)
    }

    static let metadataKey = "shared"

    // MARK: Opening

    /// Opens the shared document in the bundle at `path` for `account`'s identity. Throws
    /// ``SyncError/Code/notShared`` when the bundle is not shared or this identity holds no
    /// group state for it; finishes an interrupted send first.
    public static func open(bundleAt path: String, device: DeviceID, account: SyncAccount) async throws -> SharedDocument {
        guard let link = try link(ofBundleAt: path) else {
            throw SyncError(.notShared, "\(path) is not shared (imprint share)")
        }
        guard var state = try SyncState.load(home: account.home.path, convoId: link.convoId) else {
            throw SyncError(.notShared, "\(path) is shared through convo \(link.convoId), but this identity (\(account.did)) is not a member of it here")
        }
        let record = try account.keyStore.groupState(convo: link.convoId, for: account.identity.did)
        // A membership that ended (its group state is gone) starts again from a waiting
        // Welcome in the same bundle (`rejoin`); otherwise this identity is not a member.
        var welcomed: (group: MLSGroup, reference: [UInt8])?
        if record == nil, state.endedReason != nil {
            welcomed = try await groupFromWelcome(convoId: link.convoId, account: account)
        }
        guard record != nil || welcomed != nil else {
            if let reason = state.endedReason { throw SyncError(.removed, reason) }
            throw SyncError(.notShared, "\(path) is shared through convo \(link.convoId), but this identity (\(account.did)) is not a member of it here")
        }
        let bundle = try DocumentBundle.open(at: path, device: device)
        if state.bundlePath != bundle.store.layout.root {
            state.bundlePath = bundle.store.layout.root
            try state.save(home: account.home.path)
        }
        let group = try welcomed?.group ?? MLSGroup(serializedState: record!.state)
        let doc = SharedDocument(account: account, bundle: bundle, group: group, cursor: record?.cursor ?? .start, state: state)
        if let welcomed {
            try await doc.exclusive { try await doc.rejoin(welcomed) }
        }
        try await doc.exclusive { try await doc.finishOutbox() }
        return doc
    }

    // MARK: Sharing

    /// Makes the document in the bundle at `path` collaborative: a new MLS group (its id is the
    /// convo id), the Delivery Service convo (no title: the title is content), the shared zone
    /// `doc_<convoId>` and the first encrypted snapshot. `account`'s identity is the first
    /// member and the first admin. With `mailboxThreshold`, once the group has more members
    /// than that, every message also goes to each recipient's inbox zone (`MailboxPolicy`).
    /// With `history: .redacted`, the snapshots members who join receive hold the document's
    /// current state only: no byte of text deleted before they joined (docs/sync.md, "Joining
    /// without old keys"); by default they hold the whole history, deleted text included.
    /// Throws ``SyncError/Code/alreadyShared``.
    ///
    /// ```swift
    /// let doc = try await SharedDocument.share(bundleAt: "paper.imprint", device: device,
    ///                                          account: account, history: .redacted)
    /// try await doc.invite(["did:key:z6Mk…"])
    /// ```
    public static func share(bundleAt path: String, device: DeviceID, account: SyncAccount,
                             mailboxThreshold: Int? = nil, history: HistoryRetention = .full) async throws -> SharedDocument {
        let bundle = try DocumentBundle.open(at: path, device: device)
        if let link = try link(ofBundleAt: path) {
            throw SyncError(.alreadyShared, "\(path) is already shared through convo \(link.convoId) on \(link.server)")
        }
        var random = SystemRandomNumberGenerator()
        let groupID = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
        let convoId = Hex.encode(groupID)
        let group = try MLSGroup.create(suite: SyncAccount.suite, groupID: groupID,
                                        credential: MemberCredential.credential(for: account.identity.did),
                                        signaturePrivateKey: account.signaturePrivateKey)
        _ = try await account.delivery.createConvo(CreateConvoInput(convoId: convoId, cipherSuite: Int(SyncAccount.suite.rawValue)))
        _ = try await account.zones.createZone("doc_\(convoId)", convoId: convoId)
        var state = SyncState(convoId: convoId, did: account.did, serverURL: account.serverURL, serviceDID: account.delivery.serviceDID,
                              bundlePath: bundle.store.layout.root, joinedEpoch: 0, admins: [account.did])
        state.mailboxThreshold = mailboxThreshold
        state.currentStateOnly = history == .redacted
        let doc = SharedDocument(account: account, bundle: bundle, group: group, cursor: .start, state: state)
        try await doc.saveGroup()
        try await doc.saveState()
        _ = try bundle.store.updateMetadata { metadata in
            metadata.extra[Self.metadataKey] = .object(["convoId": .string(convoId), "server": .string(account.serverURL)])
        }
        _ = try await doc.exclusive { try await doc.sendSnapshot() }
        try await account.topUpKeyPackages()
        return doc
    }

    // MARK: Persistence

    /// Commits the MLS state with the processed cursor (one key-store transaction). Received
    /// changes not yet in the bundle are made durable first (`flushReceived`): a state that
    /// consumed their keys never reaches the disk before them.
    func saveGroup() throws {
        if receivedUnflushed { try flushReceived() } else { try writeGroup() }
    }

    /// Saves the sync state; like `saveGroup`, after any received changes are in the bundle
    /// (the state records seqs as applied).
    func saveState() throws {
        if receivedUnflushed { try flushReceived() } else { try writeState() }
    }

    func writeGroup() throws {
        let serialized = group.serializedState()
        try account.keyStore.saveGroupState(GroupStateRecord(state: serialized, cursor: cursor), convo: convoId, for: account.identity.did)
        persistedGroup.remember(serialized, as: group)
    }

    func writeState() throws {
        let bytes = try state.save(home: home)
        persistedState.remember(bytes, as: state)
    }

    /// Runs `body`, which encrypts or commits in the current epoch; when the Delivery Service
    /// answers that the epoch has ended (409 `EpochMismatch`), catches up (pull) and runs it
    /// again in the new one, at most `options.commitRetries` more times, then throws
    /// ``SyncError/Code/conflictRetriesExhausted`` with `reason`.
    func inCurrentEpoch<T>(or reason: String, _ body: () async throws -> T) async throws -> T {
        for _ in 0...account.options.commitRetries {
            do {
                return try await body()
            } catch let error as DeliveryServiceError where error.name == "EpochMismatch" {
                _ = try await pullNow()
            }
        }
        throw SyncError(.conflictRetriesExhausted, reason)
    }

    /// The key-store name of a commit's resulting state while the Delivery Service has not
    /// acknowledged the commit yet.
    var pendingConvo: String { convoId + "#pending" }

    /// The first 16 bytes of the current epoch's authenticator: carried in every message's
    /// authenticated data, compared by every receiver with its own.
    var authenticatorTag: [UInt8] { Array(group.epochAuthenticator.prefix(16)) }

    func rememberAuthenticator() {
        state.authenticators[String(group.epoch)] = Hex.encode(authenticatorTag)
        // A few recent epochs are enough to compare late messages.
        let keep = group.epoch >= 8 ? group.epoch - 8 : 0
        state.authenticators = state.authenticators.filter { (UInt64($0.key) ?? 0) >= keep }
    }

    /// The DS's roster and the MLS group's must agree once this member is at the DS's epoch.
    func checkRoster() async throws {
        guard let convo = try await account.delivery.getConvos().convos.first(where: { $0.id == convoId }) else {
            throw SyncError(.notMember, "the Delivery Service does not list \(did) in convo \(convoId)")
        }
        guard UInt64(exactly: convo.epoch) == group.epoch else { return }
        let mls = Set(try MemberCredential.roster(of: group).values)
        let ds = Set(convo.members.map(\.did))
        // A member who left is still in the MLS tree until the next commit removes it.
        guard ds.isSubset(of: mls) else {
            throw SyncError(.rosterMismatch, "the Delivery Service lists \(ds.subtracting(mls).sorted()) who are not in the MLS group")
        }
    }
}

extension SharedDocument {
    /// Edits the document through this member's open bundle: `body` runs on the bundle, alone
    /// with respect to the other operations, as one batch (`DocumentBundle.batch`): its edits
    /// are durable in this device's log when this returns, written with one fsync. Push to
    /// send. The members watching the document (`live`) see the edits before the fsync: they
    /// are relayed to them as a preview the moment they are made (docs/sync.md, "Previews").
    ///
    /// ```swift
    /// try await doc.edit { try $0.insert("Hello", at: 0) }
    /// try await doc.push()
    /// ```
    public func edit<T: Sendable>(_ body: @Sendable (DocumentBundle) throws -> T) async throws -> T {
        // Nothing here writes the sync or MLS state, so they are not read again first: that
        // read is on the way to the others' screens.
        try await exclusive(reloadingState: false) {
            try reloadBundleIfChanged()
            // Relayed to the members watching before the bundle's fsync (docs/sync.md, "Previews").
            return try writingToBundle(justReloaded: true) {
                try bundle.batch { try body(bundle) } beforePersisting: { sendPreview(of: $0) }
            }
        }
    }
}
