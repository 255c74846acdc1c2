import Foundation
import ImprintDelivery

/// A convo with an owner and (optionally) more members, built through the API.
public struct ConvoFixture: Sendable {
    public let owner: DeliveryClient
    public let members: [DeliveryClient]
    public let convoId: String
    public var epoch: Int

    public static func make(on server: RunningServer, extraMembers: Int = 0, title: String? = "doc") async throws -> ConvoFixture {
        let owner = server.client()
        let created = try await owner.createConvo(CreateConvoInput(title: title, cipherSuite: 1))
        var fixture = ConvoFixture(owner: owner, members: [], convoId: created.convo.id, epoch: 0)
        if extraMembers > 0 {
            let others = (0..<extraMembers).map { _ in server.client() }
            let result = try await owner.addMembers(AddMembersInput(
                convoId: fixture.convoId, epoch: 0, dids: others.map(\.did), commit: Data("commit-0".utf8),
                welcome: Data("welcome-0".utf8)))
            fixture = ConvoFixture(owner: owner, members: others, convoId: fixture.convoId, epoch: result.epoch)
        }
        return fixture
    }
}
