import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import Testing

/// `sendEphemeral` / `subscribeEphemeral` (v1.2): relayed at once to the convo's subscribed
/// members, never to the sender or to outsiders, stored nowhere, across instances on
/// PostgreSQL; a member's stream ends when the member is removed.
@Suite struct EphemeralRelayTests {
    struct TimeoutError: Error {}

    /// Opens `subscriber`'s stream, then sends `data` from `sender` every 100 ms until the
    /// stream yields (a message sent before the subscription is open reaches no one, by
    /// design); returns the first message received that carries `data`. Another test step's
    /// last send may still be on its way when this stream opens (on PostgreSQL it crosses the
    /// server through `LISTEN`); reaching this stream then is correct relaying, so it is skipped.
    static func relay(_ data: Data, from sender: DeliveryClient, to subscriber: DeliveryClient, convoId: String, epoch: Int,
                      kind: String? = nil) async throws -> EphemeralMessage {
        try await withThrowingTaskGroup(of: EphemeralMessage?.self) { group in
            group.addTask {
                for try await message in subscriber.subscribeEphemeral(convoId: convoId) where message.data == data { return message }
                return nil
            }
            group.addTask {
                for _ in 0..<200 {
                    try await sender.sendEphemeral(SendEphemeralInput(convoId: convoId, epoch: epoch, data: data, kind: kind))
                    try await Task.sleep(for: .milliseconds(100))
                }
                throw TimeoutError()
            }
            let first = try await group.next()!
            group.cancelAll()
            return try #require(first, "the stream ended without a message")
        }
    }

    @Test(arguments: StoreKind.available)
    func membersGetItAtOnceAndNothingIsStored(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let bob = fixture.members[0]
            let before = try await bob.getMessages(convoId: fixture.convoId).messages.count
            let received = try await Self.relay(Data("caret at 7".utf8), from: fixture.owner, to: bob, convoId: fixture.convoId, epoch: fixture.epoch)
            #expect(received == EphemeralMessage(convoId: fixture.convoId, sender: fixture.owner.did, epoch: fixture.epoch, data: Data("caret at 7".utf8)))
            // No seq, no event: the convo's history is as it was.
            #expect(try await bob.getMessages(convoId: fixture.convoId).messages.count == before)
            let events = try await server.store.events(recipient: bob.did, after: 0, limit: 1000)
            #expect(!events.contains { if case .message(let m) = $0.payload { m.message.seq > before } else { false } })
        }
    }

    /// v1.4: the sender's `kind` reaches the subscriber as given; no kind stays absent.
    @Test(arguments: StoreKind.available)
    func theKindIsRelayedAsGiven(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let bob = fixture.members[0]
            let preview = try await Self.relay(Data([9, 9]), from: fixture.owner, to: bob, convoId: fixture.convoId, epoch: fixture.epoch,
                                               kind: EphemeralKind.preview)
            #expect(preview.kind == "preview" && preview.effectiveKind == EphemeralKind.preview && preview.data == Data([9, 9]))
            let plain = try await Self.relay(Data([1]), from: fixture.owner, to: bob, convoId: fixture.convoId, epoch: fixture.epoch)
            #expect(plain.kind == nil && plain.effectiveKind == EphemeralKind.presence)
        }
    }

    @Test(arguments: StoreKind.available)
    func outsidersAndBadInputAreRefused(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server)
            let stranger = server.client()
            let input = SendEphemeralInput(convoId: fixture.convoId, epoch: 0, data: Data([1]))
            await expectServiceError(403, "NotMember") { try await stranger.sendEphemeral(input) }
            await expectServiceError(403, "NotMember") {
                for try await _ in stranger.subscribeEphemeral(convoId: fixture.convoId) {}
            }
            await expectServiceError(404, "NotFound") {
                try await fixture.owner.sendEphemeral(SendEphemeralInput(convoId: "no-such-convo", epoch: 0, data: Data([1])))
            }
            await expectServiceError(400, "InvalidRequest") {
                try await fixture.owner.sendEphemeral(SendEphemeralInput(convoId: fixture.convoId, epoch: 0, data: Data(count: 2049)))
            }
            await expectServiceError(400, "InvalidRequest") {
                try await fixture.owner.sendEphemeral(SendEphemeralInput(convoId: fixture.convoId, epoch: 0, data: Data()))
            }
            for bad in ["", "Preview", "pre view", String(repeating: "k", count: 33), "prévue"] {
                await expectServiceError(400, "InvalidRequest") {
                    try await fixture.owner.sendEphemeral(SendEphemeralInput(convoId: fixture.convoId, epoch: 0, data: Data([1]), kind: bad))
                }
            }
        }
    }

    /// The stream of a member who is removed ends as the removal commits, not at the next
    /// heartbeat (an hour here).
    @Test(.timeLimit(.minutes(5)), arguments: StoreKind.available)
    func aRemovedMembersStreamEnds(kind: StoreKind) async throws {
        try await withServer(kind, configure: { $0.eventHeartbeat = .seconds(3600) }) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 2)
            let (bob, carol) = (fixture.members[0], fixture.members[1])
            // Carol's stream is open (a message reached it through it) before the removal.
            let (opened, signal) = AsyncStream.makeStream(of: Void.self)
            let ended = Task {
                for try await _ in carol.subscribeEphemeral(convoId: fixture.convoId) { signal.yield() }
                return true
            }
            try await Self.remove(carol.did, from: fixture, onceReached: opened) {
                try await bob.sendEphemeral(SendEphemeralInput(convoId: fixture.convoId, epoch: fixture.epoch, data: Data([7])))
            }
            let timeout = Task {
                try await Task.sleep(for: .seconds(30))
                ended.cancel()
            }
            _ = try await ended.value
            timeout.cancel()
            #expect(!ended.isCancelled, "the removed member's stream ended by itself")
        }
    }

    /// Sends with `send` every 50 ms until `reached` yields (a message reached the member's
    /// open stream or socket, so it is subscribed), then has the owner remove `did`.
    static func remove(_ did: String, from fixture: ConvoFixture, onceReached reached: AsyncStream<Void>,
                       sending send: @escaping @Sendable () async throws -> Void) async throws {
        await sendUntil(reached, sending: send)
        _ = try await fixture.owner.removeMember(RemoveMemberInput(convoId: fixture.convoId, epoch: fixture.epoch, did: did,
                                                                   commit: Data("remove".utf8)))
    }

    /// Sends with `send` every 50 ms until `reached` yields, and stops sending before it returns
    /// (a message sent before the receiver's stream is open reaches no one, by design).
    static func sendUntil(_ reached: AsyncStream<Void>, sending send: @escaping @Sendable () async throws -> Void) async {
        let sender = Task {
            while !Task.isCancelled {
                try await send()
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        var waiting = reached.makeAsyncIterator()
        _ = await waiting.next()
        sender.cancel()
        _ = await sender.result
    }

    /// Sent through one instance, received by a member connected to the other.
    @Test func crossesInstancesOnPostgres() async throws {
        guard StoreKind.available.contains(.postgres) else { return }
        try await withTwoPostgresInstances { first, second in
            let fixture = try await ConvoFixture.make(on: first, extraMembers: 1)
            let bobOnSecond = second.client(fixture.members[0].signer)
            let received = try await Self.relay(Data("hello".utf8), from: fixture.owner, to: bobOnSecond, convoId: fixture.convoId, epoch: fixture.epoch)
            #expect(received.sender == fixture.owner.did && received.data == Data("hello".utf8))
        }
    }
}
