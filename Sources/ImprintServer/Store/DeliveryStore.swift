import Foundation
import ImprintDelivery

/// The single persistence seam of the Delivery Service. Each implementation enforces the
/// contract's atomicity rules itself (see docs/delivery-service.md); callers pass inputs
/// already validated for shape, and get `DeliveryError`s for rule violations.
public protocol DeliveryStore: Sendable {
    /// Creates or migrates the schema.
    func migrate() async throws

    /// Wakes up when an event may have been written by this or another instance.
    var eventBell: EventBell { get }

    /// Where accepted token ids are remembered: shared by every instance using this store.
    var tokenReplayGuard: any TokenReplayGuard { get }

    func publishKeyPackage(_ keyPackage: NewKeyPackage) async throws -> String
    /// Hands out (and thereby consumes) at most one unexpired key package per DID.
    func consumeKeyPackages(dids: [String], cipherSuite: Int?, now: Date) async throws -> [KeyPackageRef]

    func createConvo(_ convo: NewConvo) async throws -> ConvoView
    /// v1.1: replaces the convo's admins besides the creator. Only an active creator may
    /// (`notMember`, then `forbidden`); each DID must be an active member (`invalidRequest`).
    func setAdmins(convoId: String, caller: String, admins: [String]) async throws -> ConvoView
    func convos(memberDID: String) async throws -> [ConvoView]

    /// v1.1: the caller must be the creator or an admin (`forbidden`).
    func addMembers(_ change: MemberAddition) async throws -> EpochAdvanceOutput
    /// v1.1: removing an active member takes the creator or an admin (`forbidden`); any active
    /// member may remove a DID that left (`leaveConvo`) and was not removed since.
    func removeMember(_ change: MemberRemoval) async throws -> EpochAdvanceOutput
    /// The caller becomes inactive and "left" until a `removeMember` commits its removal; it
    /// stops being an admin.
    func leaveConvo(convoId: String, did: String, now: Date) async throws

    func welcome(convoId: String, did: String) async throws -> GetWelcomeOutput?
    func deleteWelcome(convoId: String, did: String) async throws

    /// Sequences `message`. `token` (the request's verified service-auth token) is admitted
    /// by `tokenReplayGuard`'s rules before anything else and stays admitted even when the
    /// message is then refused; a replay throws `DeliveryError.tokenReplayed()` and changes nothing.
    /// A `clientMessageId` already used by the sender in the convo is looked up under the convo's
    /// write lock, before the epoch check: concurrent retries take exactly one seq.
    func sendMessage(_ message: NewMessage, admitting token: TokenAdmission) async throws -> SendMessageOutput
    func messages(convoId: String, caller: String, sinceSeq: Int, limit: Int) async throws -> [MessageView]

    func registerStorage(did: String, provider: StorageProvider) async throws

    /// v1.3: moves `did`'s processed cursor in `convoId` forward to `processedSeq` and returns
    /// the cursor as stored (a lower value changes nothing). The caller must be an active
    /// member (`notMember`); a seq past the convo's last is `invalidRequest`.
    func updateCursor(convoId: String, did: String, processedSeq: Int, now: Date) async throws -> Int
    /// v1.3: marks `did`'s application message `seq` as a checkpoint: its payload holds the
    /// whole document, so a member past it needs no message before it. Only the message's
    /// sender may (`forbidden`); an unknown or forgotten seq is `notFound`.
    func markCheckpoint(convoId: String, did: String, seq: Int) async throws
    /// v1.3: the active members' cursors and the convo's compaction point
    /// (`CompactionPoint`), for an active member.
    func cursors(convoId: String, caller: String) async throws -> GetCursorsOutput

    /// Events for `recipient` with cursor > `after`, ascending, at most `limit`.
    func events(recipient: String, after: Int64, limit: Int) async throws -> [ConvoEvent]

    /// Deletes up to `limit` event payloads stored before `cutoff`, with every recipient's
    /// row of them, in one transaction; returns how many payloads went (`EventRetention`).
    func purgeEvents(before cutoff: Date, limit: Int) async throws -> Int

    /// v1.2: whether `did` is an active member of `convoId`; `convoNotFound` if there is no such convo.
    func isActiveMember(convoId: String, did: String) async throws -> Bool

    /// Where `subscribeEphemeral` streams take their messages from, on this instance.
    var ephemeralHub: EphemeralHub { get }

    /// v1.2: relays `message` to the `ephemeralHub` of every instance using this store, and
    /// stores nothing.
    func relayEphemeral(_ message: EphemeralMessage) async throws

    /// Whether ``relayEphemeral(_:)`` is exactly `ephemeralHub.publish` (one instance, nothing
    /// to cross): an ephemeral socket then relays its sends on its event loop
    /// (`EphemeralSendFastPath`). False by default.
    var relaysEphemeralInProcess: Bool { get }

    func shutdown() async throws
}

/// `publishKeyPackage` after validation.
public struct NewKeyPackage: Sendable {
    public var did: String
    public var keyPackage: Data
    public var cipherSuite: Int
    public var expiresAt: Date
    public var now: Date
    /// Unconsumed packages a DID may hold.
    public var limit: Int
}

/// `createConvo` after validation; `id` is already chosen.
public struct NewConvo: Sendable {
    public var id: String
    public var creator: String
    public var title: String?
    public var cipherSuite: Int
    /// v1.1: DIDs besides the creator that may add and remove members; distinct.
    public var admins: [String] = []
    public var now: Date
}

/// `addMembers` after validation.
public struct MemberAddition: Sendable {
    public var convoId: String
    public var caller: String
    public var epoch: Int
    public var dids: [String]
    public var commit: Data
    public var welcome: Data
    public var now: Date
}

/// `removeMember` after validation.
public struct MemberRemoval: Sendable {
    public var convoId: String
    public var caller: String
    public var epoch: Int
    public var did: String
    public var commit: Data
    public var now: Date
}

/// `sendMessage` after validation.
public struct NewMessage: Sendable {
    public var convoId: String
    public var sender: String
    public var epoch: Int
    public var messageType: MessageType
    public var hash: String
    public var size: Int
    public var recordName: String?
    /// v1.1 idempotency key: unique per (sender, convo). A message already stored under it is
    /// answered again (same seq and epoch, no new event) when hash, size and type match, and
    /// refused with `DeliveryError.clientMessageIdReused` when they do not.
    public var clientMessageId: String? = nil
    /// v1.1: a commit's bytes (their SHA-256 hex is `hash`, checked by the caller), kept with
    /// the seq and returned by `messages`; never part of the `message` event.
    public var commit: Data? = nil
    public var now: Date
}

extension DeliveryStore {
    public var relaysEphemeralInProcess: Bool { false }
}
