import Foundation
import ImprintDelivery
import ImprintSync

/// A Delivery Service stand-in that sends every call on to `real` unless it implements the
/// method itself: the test stand-ins (`HostileDeliveryService`, `PreviewTapDeliveryService`)
/// write only the calls they change.
protocol ForwardingDeliveryService: DeliveryService {
    var real: any DeliveryService { get }
}

extension ForwardingDeliveryService {
    var baseURL: String { real.baseURL }
    var serviceDID: String { real.serviceDID }
    func publishKeyPackage(_ input: PublishKeyPackageInput) async throws -> PublishKeyPackageOutput { try await real.publishKeyPackage(input) }
    func getKeyPackages(dids: [String], cipherSuite: Int?) async throws -> GetKeyPackagesOutput {
        try await real.getKeyPackages(dids: dids, cipherSuite: cipherSuite)
    }
    func createConvo(_ input: CreateConvoInput) async throws -> CreateConvoOutput { try await real.createConvo(input) }
    func getConvos() async throws -> GetConvosOutput { try await real.getConvos() }
    func addMembers(_ input: AddMembersInput) async throws -> EpochAdvanceOutput { try await real.addMembers(input) }
    func getWelcome(convoId: String) async throws -> GetWelcomeOutput { try await real.getWelcome(convoId: convoId) }
    func confirmWelcome(convoId: String) async throws { try await real.confirmWelcome(convoId: convoId) }
    func removeMember(_ input: RemoveMemberInput) async throws -> EpochAdvanceOutput { try await real.removeMember(input) }
    func leaveConvo(convoId: String) async throws { try await real.leaveConvo(convoId: convoId) }
    func sendMessage(_ input: SendMessageInput) async throws -> SendMessageOutput { try await real.sendMessage(input) }
    func getMessages(convoId: String, sinceSeq: Int?, limit: Int?) async throws -> GetMessagesOutput {
        try await real.getMessages(convoId: convoId, sinceSeq: sinceSeq, limit: limit)
    }
    func subscribeConvoEvents(cursor: Int64?) -> AsyncThrowingStream<ConvoEvent, Error> { real.subscribeConvoEvents(cursor: cursor) }
    func sendEphemeral(_ input: SendEphemeralInput) async throws { try await real.sendEphemeral(input) }
    func subscribeEphemeral(convoId: String) -> AsyncThrowingStream<EphemeralMessage, Error> { real.subscribeEphemeral(convoId: convoId) }
    func openEphemeralChannel(convoId: String) async throws -> EphemeralChannel? { try await real.openEphemeralChannel(convoId: convoId) }
    func updateCursor(convoId: String, processedSeq: Int) async throws -> Int { try await real.updateCursor(convoId: convoId, processedSeq: processedSeq) }
    func markCheckpoint(convoId: String, seq: Int) async throws { try await real.markCheckpoint(convoId: convoId, seq: seq) }
    func getCursors(convoId: String) async throws -> GetCursorsOutput { try await real.getCursors(convoId: convoId) }
    func registerStorage(_ provider: StorageProvider) async throws { try await real.registerStorage(provider) }
    func setAdmins(_ input: SetAdminsInput) async throws -> SetAdminsOutput { try await real.setAdmins(input) }
}
