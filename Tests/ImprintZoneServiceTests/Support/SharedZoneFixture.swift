import Crypto
import Foundation
import ImprintDelivery
import ImprintServer
import ImprintZoneService

/// A convo (owner + members) and its shared zone `doc_<convoId>`, made through both APIs.
struct SharedZoneFixture: Sendable {
    let owner: ZoneTestClient
    let members: [ZoneTestClient]
    let convoId: String
    var zoneId: String { "doc_\(convoId)" }

    static func make(on server: ZoneTestServer, members count: Int = 1) async throws -> SharedZoneFixture {
        let owner = server.client()
        let convo = try await server.delivery(owner).createConvo(CreateConvoInput(cipherSuite: 1)).convo
        let members = (0..<count).map { _ in server.client() }
        if count > 0 {
            _ = try await server.delivery(owner).addMembers(AddMembersInput(
                convoId: convo.id, epoch: 0, dids: members.map(\.did), commit: Data("commit".utf8), welcome: Data("welcome".utf8)))
        }
        let fixture = SharedZoneFixture(owner: owner, members: members, convoId: convo.id)
        try await owner.createZone(fixture.zoneId, convoId: convo.id)
        return fixture
    }

    /// Sends an app message for `payload` as `sender` and returns the `change` record that may carry it.
    func change(_ payload: Data, from sender: ZoneTestClient, on server: ZoneTestServer, name: String) async throws -> RecordToSave {
        let hash = CommitDigest.hex(payload)
        let convo = try await server.delivery(sender).getConvos().convos.first { $0.id == convoId }!
        let sent = try await server.delivery(sender).sendMessage(SendMessageInput(
            convoId: convoId, epoch: convo.epoch, messageType: .app, hash: hash, size: payload.count, recordName: name))
        return RecordToSave(
            recordName: name, recordType: "change",
            fields: ["convoId": .string(convoId), "epoch": .number(Double(convo.epoch)), "seq": .number(Double(sent.seq)),
                     "chunkIndex": .number(0), "chunkCount": .number(1), "payloadHash": .string(hash)],
            assetData: payload)
    }
}
