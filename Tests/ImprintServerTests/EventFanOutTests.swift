import Foundation
import ImprintServerTestSupport
import ImprintDelivery
import Testing

/// Event cursors under concurrent writes to different convos. A subscriber's cursor is one
/// number across all its convos, so the store must make each recipient's events visible in
/// cursor order even when convos are written in parallel (SQLite: one writer; PostgreSQL:
/// per-recipient locks held to COMMIT). If it did not, a live subscriber could move its
/// cursor past an event that commits late and never see it (this test would then time out).
@Suite struct EventFanOutTests {
    @Test(arguments: StoreKind.available)
    func aMemberOfTwoBusyConvosGetsEveryEventLiveInCursorOrder(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let shared = ServiceAuthSigner()
            var convos: [(owner: DeliveryClient, id: String, epoch: Int)] = []
            for _ in 0..<2 {
                let owner = server.client()
                let id = try await owner.createConvo(CreateConvoInput(cipherSuite: 1)).convo.id
                let added = try await owner.addMembers(AddMembersInput(
                    convoId: id, epoch: 0, dids: [shared.did], commit: Data([1]), welcome: Data([2])))
                convos.append((owner, id, added.epoch))
            }
            let subscriber = server.client(shared)
            // Per convo: the commit's message, membership added, welcome.
            let opening = try await EventStreamTests.read(6, from: subscriber, cursor: nil)
            let perConvo = 40

            async let live = EventStreamTests.read(2 * perConvo, from: subscriber, cursor: opening.last!.cursor)
            try await Task.sleep(for: .milliseconds(300))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<(2 * perConvo) {
                    let convo = convos[n % 2]
                    group.addTask {
                        _ = try await convo.owner.sendMessage(SendMessageInput(
                            convoId: convo.id, epoch: convo.epoch, messageType: .app, hash: fakeHash(n), size: n))
                    }
                }
                try await group.waitForAll()
            }
            let events = try await live
            #expect(zip(events, events.dropFirst()).allSatisfy { $0.cursor < $1.cursor })
            for convo in convos {
                let seqs = events.compactMap { event -> Int? in
                    guard case .message(let message) = event.payload, message.convoId == convo.id else { return nil }
                    return message.message.seq
                }
                #expect(seqs == Array(2...(perConvo + 1)))
            }
            // What was streamed live is exactly what is stored, in the same order.
            let stored = try await EventStreamTests.read(2 * perConvo, from: subscriber, cursor: opening.last!.cursor)
            #expect(stored.map(\.cursor) == events.map(\.cursor))
        }
    }
}
