import ImprintDelivery

/// The Delivery Service methods the sync layer calls: the seam between `SharedDocument` and
/// the service. `DeliveryClient` (HTTP) is the real one; tests put stand-ins in front of it
/// that misbehave as a hostile service would (swapping key packages, hiding commits), to
/// show that members catch it.
public protocol DeliveryService: Sendable {
    /// The server's base URL.
    var baseURL: String { get }
    /// The `aud` of the service's tokens.
    var serviceDID: String { get }
    func publishKeyPackage(_ input: PublishKeyPackageInput) async throws -> PublishKeyPackageOutput
    func getKeyPackages(dids: [String], cipherSuite: Int?) async throws -> GetKeyPackagesOutput
    func createConvo(_ input: CreateConvoInput) async throws -> CreateConvoOutput
    func getConvos() async throws -> GetConvosOutput
    func addMembers(_ input: AddMembersInput) async throws -> EpochAdvanceOutput
    func getWelcome(convoId: String) async throws -> GetWelcomeOutput
    func confirmWelcome(convoId: String) async throws
    func removeMember(_ input: RemoveMemberInput) async throws -> EpochAdvanceOutput
    func leaveConvo(convoId: String) async throws
    func sendMessage(_ input: SendMessageInput) async throws -> SendMessageOutput
    func getMessages(convoId: String, sinceSeq: Int?, limit: Int?) async throws -> GetMessagesOutput
    func subscribeConvoEvents(cursor: Int64?) -> AsyncThrowingStream<ConvoEvent, Error>
    func sendEphemeral(_ input: SendEphemeralInput) async throws
    func subscribeEphemeral(convoId: String) -> AsyncThrowingStream<EphemeralMessage, Error>
    /// v1.5: this member's ephemeral socket on `convoId`, or nil when there is none (a service
    /// before v1.5, a stand-in without one): ephemeral messages then go by `sendEphemeral` and
    /// come by `subscribeEphemeral`. The default is nil; `DeliveryClient` opens the socket.
    ///
    /// A requirement, not only an extension method, so that a call on `any DeliveryService`
    /// reaches the conforming type's own implementation.
    func openEphemeralChannel(convoId: String) async throws -> EphemeralChannel?
    /// v1.3: acknowledges every message up to `processedSeq`; returns the stored cursor.
    func updateCursor(convoId: String, processedSeq: Int) async throws -> Int
    /// v1.3: marks this member's snapshot message `seq` as a checkpoint.
    func markCheckpoint(convoId: String, seq: Int) async throws
    /// v1.3: the members' cursors and the convo's compaction point.
    func getCursors(convoId: String) async throws -> GetCursorsOutput
    /// Where this DID's records go (`recipients[].storage` of everyone's `sendMessage`).
    func registerStorage(_ provider: StorageProvider) async throws
    /// v1.1: the DIDs besides the creator that may add and remove members (the creator's only).
    func setAdmins(_ input: SetAdminsInput) async throws -> SetAdminsOutput
}

extension DeliveryService {
    /// No socket: the caller falls back to `sendEphemeral` and `subscribeEphemeral`.
    public func openEphemeralChannel(convoId: String) async throws -> EphemeralChannel? { nil }
}

extension DeliveryClient: DeliveryService {}
