import Foundation
import ImprintDelivery
import ImprintFiles

/// What one identity remembers of one shared document besides its MLS state: where the
/// document lives, how far it has sent and received, the gaps. Nothing
/// secret (the MLS state and the processed cursor are in the key store); kept as
/// `<home>/sync/<convoId>.json`, written atomically after each step.
///
/// The crash rules (docs/sync.md) rest on the order of writes: an outbox message
/// (`OutboxMessage`) is written only after the advanced ratchet is in the key store;
/// `sharedHeads` advances only after the record is in the zone; received changes are in the
/// bundle before the cursor that passes them is committed.
struct SyncState: Codable, Sendable, Hashable {
    /// A seq the DS sequenced whose record is not (yet) in the zone.
    struct Gap: Codable, Sendable, Hashable {
        var seq: Int
        var epoch: UInt64
        var firstSeen: Date
        var sender: String
        /// SHA-256 hex of the ciphertext the Delivery Service sequenced (absent in states
        /// written before it was kept: such a gap's payload is taken unchecked).
        var hash: String? = nil
        /// When this member last asked the group for the changes it lacks because of this gap
        /// (`SharedDocument+MissingChanges`), or nil.
        var requestedAt: Date? = nil

        /// The application message the Delivery Service sequenced at this gap.
        var message: MessageView {
            MessageView(seq: seq, epoch: Int(epoch), sender: sender, messageType: .app, hash: hash ?? "", size: 0, sentAt: firstSeen, recordName: nil)
        }
    }

    var convoId: String
    var did: String
    var serverURL: String
    var serviceDID: String
    /// The bundle this identity keeps the document in.
    var bundlePath: String
    /// Heads of everything this member has sent or received through the group: what the
    /// others have seen. Local changes are `changes(since: sharedHeads)`.
    var sharedHeads: [String] = []
    /// The epoch this identity joined in (it can decrypt nothing older).
    var joinedEpoch: UInt64 = 0
    /// DIDs allowed to add and remove members.
    var admins: [String] = []
    /// App messages above the processed cursor that are already applied (out of order).
    var processedAbove: [Int] = []
    /// Seqs whose records have not arrived.
    var gaps: [Gap] = []
    /// Senders of messages that arrived only after their epoch's keys were gone: the changes
    /// they carried are asked for at the next pull (`SharedDocument+MissingChanges`).
    var unreadableFrom: [String] = []
    /// Own changes a snapshot lacked: sent again in the current epoch at the next push.
    var resend: [String] = []
    /// An Add commit of this member's was accepted, its snapshot not sent yet.
    var snapshotOwed = false
    /// SHA-256 hex of a commit of this member's that the Delivery Service has not
    /// acknowledged yet (its resulting state is in the key store as `<convo>#pending`).
    var pendingCommitHash: String?
    /// Whether that commit adds members (a snapshot is owed once it is accepted).
    var pendingCommitAdds = false
    /// Why this identity can no longer use the convo (removed, left), once known.
    var endedReason: String?
    /// Problems seen while pulling that need a person's attention (roster disagreements,
    /// forked histories, refused commits), newest last, at most 20.
    var alerts: [String] = []
    /// The highest seq the Delivery Service gave a message of this member's (so a message of
    /// this DID above it was sent by another copy of this home).
    var lastSentSeq = 0
    /// Why this copy of the home must not send (another copy of it sent; its MLS state may
    /// reuse their generations), or nil.
    var staleReason: String?
    /// The last time a pull completed.
    var lastPull: Date?
    /// The processed cursor the Delivery Service last stored for this member (v1.3).
    var acknowledgedSeq = 0
    /// Epoch authenticators (hex, truncated) of recent epochs, to compare with other members'.
    var authenticators: [String: String] = [:]
    /// Assets shared through the group, by id (SHA-256 hex); their keys are in the key store.
    var assets: [String: SharedAsset] = [:]
    /// Mailbox delivery (`MailboxPolicy`): past this many members, every record also goes to
    /// each recipient's inbox zone. Set by the sharer, carried in snapshots.
    var mailboxThreshold: Int?
    /// Whether this document's snapshots carry its current state only (no deleted text): the
    /// sharer's choice (`share(…, history: .redacted)`), carried in snapshots.
    var currentStateOnly = false
    /// Inbox copies of sent messages not yet saved (an inbox unreachable, or a crash): retried
    /// at the next push or pull from the message's record in the shared zone.
    var inboxPending: [InboxDelivery] = []
    /// Whether this member's own inbox zone exists on the server.
    var inboxCreated = false
    /// The server of its own (`registerStorage`) where this member made its inbox, once made.
    var inboxEndpoint: String?
    /// `<endpoint> <epoch>` of the inbox write capability this member last registered there
    /// (`InboxCapability`); registered again when either changes.
    var inboxCapabilityRegistered: String?
    /// How far `sweepInbox` has read this member's inbox (its change token), and the copies of
    /// this document it saw there for seqs not processed yet (record name → seq), deleted once
    /// the cursor passes them.
    var inboxSweepToken: String?
    var inboxAhead: [String: Int] = [:]

    /// A sent message still owed to some recipients' inboxes on one server.
    struct InboxDelivery: Codable, Sendable, Hashable {
        var seq: Int
        var epoch: UInt64
        var hash: String
        var dids: [String]
        /// The recipients' own zone server (`registerStorage`); nil: the document's server.
        var endpoint: String?
        /// Attempts that failed so far (`MailboxPolicy.maximumAttempts`).
        var failures = 0

        init(seq: Int, epoch: UInt64, hash: String, dids: [String], endpoint: String? = nil) {
            (self.seq, self.epoch, self.hash, self.dids, self.endpoint) = (seq, epoch, hash, dids, endpoint)
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            seq = try c.decode(Int.self, forKey: .seq)
            epoch = try c.decode(UInt64.self, forKey: .epoch)
            hash = try c.decode(String.self, forKey: .hash)
            dids = try c.decode([String].self, forKey: .dids)
            endpoint = try c.decodeIfPresent(String.self, forKey: .endpoint)
            failures = try c.decodeIfPresent(Int.self, forKey: .failures) ?? 0
        }
    }

    /// An asset shared through the group: where its records are. Not secret (the content key
    /// is in the key store); the asset itself is in the bundle once fetched.
    struct SharedAsset: Codable, Sendable, Hashable {
        var size: UInt64
        /// Segment `i` is record `<recordBase>.<i>` of the document's zone.
        var recordBase: String
        /// Who shared it first.
        var sharedBy: String
        /// Whether the group has been told (false: this member uploaded it and has not sent
        /// the announcement yet; the next push uploads again, idempotently, and announces).
        var announced: Bool
    }

    init(convoId: String, did: String, serverURL: String, serviceDID: String, bundlePath: String,
         sharedHeads: [String] = [], joinedEpoch: UInt64 = 0, admins: [String] = []) {
        self.convoId = convoId
        self.did = did
        self.serverURL = serverURL
        self.serviceDID = serviceDID
        self.bundlePath = bundlePath
        self.sharedHeads = sharedHeads
        self.joinedEpoch = joinedEpoch
        self.admins = admins
    }

    /// Decodes a state written by this or an earlier version: a field added since is missing
    /// from older files and takes its default.
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        convoId = try c.decode(String.self, forKey: .convoId)
        did = try c.decode(String.self, forKey: .did)
        serverURL = try c.decode(String.self, forKey: .serverURL)
        serviceDID = try c.decode(String.self, forKey: .serviceDID)
        bundlePath = try c.decode(String.self, forKey: .bundlePath)
        sharedHeads = try c.decodeIfPresent([String].self, forKey: .sharedHeads) ?? []
        joinedEpoch = try c.decodeIfPresent(UInt64.self, forKey: .joinedEpoch) ?? 0
        admins = try c.decodeIfPresent([String].self, forKey: .admins) ?? []
        processedAbove = try c.decodeIfPresent([Int].self, forKey: .processedAbove) ?? []
        gaps = try c.decodeIfPresent([Gap].self, forKey: .gaps) ?? []
        unreadableFrom = try c.decodeIfPresent([String].self, forKey: .unreadableFrom) ?? []
        resend = try c.decodeIfPresent([String].self, forKey: .resend) ?? []
        snapshotOwed = try c.decodeIfPresent(Bool.self, forKey: .snapshotOwed) ?? false
        pendingCommitHash = try c.decodeIfPresent(String.self, forKey: .pendingCommitHash)
        pendingCommitAdds = try c.decodeIfPresent(Bool.self, forKey: .pendingCommitAdds) ?? false
        endedReason = try c.decodeIfPresent(String.self, forKey: .endedReason)
        alerts = try c.decodeIfPresent([String].self, forKey: .alerts) ?? []
        lastSentSeq = try c.decodeIfPresent(Int.self, forKey: .lastSentSeq) ?? 0
        staleReason = try c.decodeIfPresent(String.self, forKey: .staleReason)
        lastPull = try c.decodeIfPresent(Date.self, forKey: .lastPull)
        acknowledgedSeq = try c.decodeIfPresent(Int.self, forKey: .acknowledgedSeq) ?? 0
        authenticators = try c.decodeIfPresent([String: String].self, forKey: .authenticators) ?? [:]
        assets = try c.decodeIfPresent([String: SharedAsset].self, forKey: .assets) ?? [:]
        mailboxThreshold = try c.decodeIfPresent(Int.self, forKey: .mailboxThreshold)
        currentStateOnly = try c.decodeIfPresent(Bool.self, forKey: .currentStateOnly) ?? false
        inboxPending = try c.decodeIfPresent([InboxDelivery].self, forKey: .inboxPending) ?? []
        inboxCreated = try c.decodeIfPresent(Bool.self, forKey: .inboxCreated) ?? false
        inboxEndpoint = try c.decodeIfPresent(String.self, forKey: .inboxEndpoint)
        inboxCapabilityRegistered = try c.decodeIfPresent(String.self, forKey: .inboxCapabilityRegistered)
        inboxSweepToken = try c.decodeIfPresent(String.self, forKey: .inboxSweepToken)
        inboxAhead = try c.decodeIfPresent([String: Int].self, forKey: .inboxAhead) ?? [:]
    }

    static func directory(home: String) -> String { home + "/sync" }
    static func path(home: String, convoId: String) -> String { directory(home: home) + "/\(convoId).json" }

    static func load(home: String, convoId: String) throws(SyncError) -> SyncState? {
        guard let bytes = try storedBytes(home: home, convoId: convoId) else { return nil }
        return try SyncState(stored: bytes, path: path(home: home, convoId: convoId))
    }

    /// The bytes of the stored state, nil if there is none.
    static func storedBytes(home: String, convoId: String) throws(SyncError) -> [UInt8]? {
        let path = path(home: home, convoId: convoId)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try AtomicFile.read(path, limit: 16 << 20)
        } catch {
            throw SyncError(.io, "\(path) is unreadable: \(error)")
        }
    }

    /// Decodes stored bytes (read from `path`, for the error).
    init(stored bytes: [UInt8], path: String) throws(SyncError) {
        do {
            self = try JSONDecoder.sync.decode(SyncState.self, from: Data(bytes))
        } catch {
            throw SyncError(.io, "\(path) is unreadable: \(error)")
        }
    }

    /// Writes the state atomically; returns the bytes written.
    @discardableResult
    func save(home: String) throws(SyncError) -> [UInt8] {
        do {
            try FileManager.default.createDirectory(atPath: Self.directory(home: home), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            let bytes = Array(try JSONEncoder.sync.encode(self))
            try AtomicFile.write(bytes, to: Self.path(home: home, convoId: convoId), mode: 0o600)
            return bytes
        } catch {
            throw SyncError(.io, "cannot save the sync state of \(convoId): \(error)")
        }
    }
}

extension JSONEncoder {
    static var sync: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

extension JSONDecoder {
    static var sync: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
