import Foundation
import ImprintServerTestSupport
import ImprintDelivery
import Testing

/// `sendMessage` lets the store admit the token's jti together with the message (one round
/// trip on PostgreSQL). These tests pin down that this changes nothing a client can see: a
/// token works once, and a refused request uses its token up just like an accepted one.
@Suite struct SendMessageTokenTests {
    static func send(_ server: RunningServer, token: String, body: Data) async throws -> RawResponse {
        try await RawHTTP.send(
            server, .POST, DeliveryMethod.sendMessage.path,
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")], body: body)
    }

    static func body(_ convoId: String, epoch: Int, _ n: Int) throws -> Data {
        try WireJSON.encoder().encode(SendMessageInput(convoId: convoId, epoch: epoch, messageType: .app, hash: fakeHash(n), size: n))
    }

    static func token(_ signer: ServiceAuthSigner) throws -> String {
        try signer.token(audience: RunningServer.serviceDID, method: DeliveryMethod.sendMessage.nsid)
    }

    @Test(arguments: StoreKind.available)
    func aSendMessageTokenWorksOnceAndItsReplayChangesNothing(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let token = try Self.token(fixture.owner.signer)
            let first = try await Self.send(server, token: token, body: try Self.body(fixture.convoId, epoch: fixture.epoch, 1))
            #expect(first.status == 200, "\(first.text)")
            let replay = try await Self.send(server, token: token, body: try Self.body(fixture.convoId, epoch: fixture.epoch, 2))
            #expect(replay.status == 401)
            #expect(replay.errorName == "InvalidToken")
            #expect(replay.errorBody?.message.contains("replayed") == true)
            let stored = try await fixture.owner.getMessages(convoId: fixture.convoId).messages
            #expect(stored.map(\.seq) == [1, 2])
            #expect(stored.last?.hash == fakeHash(1))
        }
    }

    @Test(arguments: StoreKind.available)
    func aRefusedSendMessageStillUsesItsTokenUp(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let stranger = ServiceAuthSigner()
            let valid = try Self.body(fixture.convoId, epoch: fixture.epoch, 7)
            let refusals: [(name: String, signer: ServiceAuthSigner, body: Data, status: Int)] = [
                ("stale epoch", fixture.owner.signer, try Self.body(fixture.convoId, epoch: fixture.epoch + 5, 1), 409),
                ("malformed body", fixture.owner.signer, Data(json: "{\"convoId\": "), 400),
                ("bad hash", fixture.owner.signer, Data(json: #"{"convoId":"\#(fixture.convoId)","epoch":1,"messageType":"app","hash":"xyz","size":1}"#), 400),
                ("unknown convo", fixture.owner.signer, try Self.body("no-such-convo", epoch: 0, 1), 404),
                ("not a member", stranger, try Self.body(fixture.convoId, epoch: fixture.epoch, 1), 403),
            ]
            for refusal in refusals {
                let token = try Self.token(refusal.signer)
                let refused = try await Self.send(server, token: token, body: refusal.body)
                #expect(refused.status == refusal.status, "\(refusal.name): \(refused.text)")
                let retried = try await Self.send(server, token: token, body: valid)
                #expect(retried.status == 401, "\(refusal.name): \(retried.text)")
                #expect(retried.errorBody?.message.contains("replayed") == true, "\(refusal.name): \(retried.text)")
            }
            let stored = try await fixture.owner.getMessages(convoId: fixture.convoId).messages
            #expect(stored.map(\.seq) == [1])
        }
    }
}
