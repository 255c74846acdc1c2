import Foundation
import ImprintServerTestSupport
import ImprintDelivery
import ImprintServer
import Testing

/// Two stateless instances on one PostgreSQL database: writes through one reach event
/// subscribers of the other (LISTEN/NOTIFY), and seqs stay gapless across both.
@Suite(.enabled(if: StoreKind.postgresURL != nil, "IMPRINT_TEST_POSTGRES_URL not set: PostgreSQL fan-out NOT TESTED"))
struct CrossInstanceEventTests {
    @Test func eventsWrittenOnOneInstanceReachSubscribersOfAnother() async throws {
        try await withTwoPostgresInstances { first, second in
            let owner = first.client()
            let reader = ServiceAuthSigner()
            let convoId = try await owner.createConvo(CreateConvoInput(cipherSuite: 1)).convo.id
            let added = try await owner.addMembers(AddMembersInput(
                convoId: convoId, epoch: 0, dids: [reader.did], commit: Data([1]), welcome: Data([2])))
            let readerOnSecond = second.client(reader)
            let opening = try await EventStreamTests.read(3, from: readerOnSecond, cursor: nil)

            async let live = EventStreamTests.read(20, from: readerOnSecond, cursor: opening.last!.cursor)
            try await Task.sleep(for: .milliseconds(300))
            let seqs = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<20 {
                    // Alternate instances: both write to the same convo.
                    let client = n.isMultiple(of: 2) ? owner : second.client(owner.signer)
                    group.addTask {
                        try await client.sendMessage(SendMessageInput(
                            convoId: convoId, epoch: added.epoch, messageType: .app, hash: fakeHash(n), size: n)).seq
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(seqs.sorted() == Array(2...21))
            let events = try await live
            #expect(events.compactMap { if case .message(let m) = $0.payload { m.message.seq } else { nil } } == Array(2...21))
        }
    }
}

@Suite(.enabled(if: StoreKind.postgresURL != nil, "IMPRINT_TEST_POSTGRES_URL not set: cross-instance replay NOT TESTED"))
struct CrossInstanceReplayTests {
    @Test func aTokenAcceptedByOneInstanceIsAReplayOnAnother() async throws {
        try await withTwoPostgresInstances { first, second in
            let signer = ServiceAuthSigner()
            let token = try signer.token(audience: RunningServer.serviceDID, method: DeliveryMethod.getConvos.nsid)
            let accepted = try await RawHTTP.send(first, .GET, DeliveryMethod.getConvos.path, headers: [("Authorization", "Bearer \(token)")])
            #expect(accepted.status == 200)
            let replayed = try await RawHTTP.send(second, .GET, DeliveryMethod.getConvos.path, headers: [("Authorization", "Bearer \(token)")])
            #expect(replayed.status == 401)
            #expect(replayed.errorName == "InvalidToken")
        }
    }

    /// sendMessage admits its token inside the store's single statement: still exact across
    /// instances, for accepted and for refused requests.
    @Test func aSendMessageTokenSpentOnOneInstanceIsAReplayOnAnother() async throws {
        try await withTwoPostgresInstances { first, second in
            let fixture = try await ConvoFixture.make(on: first, extraMembers: 1)
            let valid = try SendMessageTokenTests.body(fixture.convoId, epoch: fixture.epoch, 1)
            let accepted = try SendMessageTokenTests.token(fixture.owner.signer)
            #expect(try await SendMessageTokenTests.send(first, token: accepted, body: valid).status == 200)
            let replayed = try await SendMessageTokenTests.send(second, token: accepted, body: valid)
            #expect(replayed.status == 401)
            #expect(replayed.errorBody?.message.contains("replayed") == true)

            let refused = try SendMessageTokenTests.token(fixture.owner.signer)
            let stale = try SendMessageTokenTests.body(fixture.convoId, epoch: fixture.epoch + 1, 2)
            #expect(try await SendMessageTokenTests.send(first, token: refused, body: stale).status == 409)
            let retried = try await SendMessageTokenTests.send(second, token: refused, body: valid)
            #expect(retried.status == 401)
            #expect(retried.errorBody?.message.contains("replayed") == true)

            let stored = try await second.client(fixture.owner.signer).getMessages(convoId: fixture.convoId).messages
            #expect(stored.map(\.seq) == [1, 2])
        }
    }
}
