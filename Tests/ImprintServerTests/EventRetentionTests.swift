import Foundation
@testable import ImprintServer
import ImprintServerTestSupport
import ImprintDelivery
import Testing

/// Events older than the retention window are deleted (`EventRetention`), messages are not,
/// and cursors go on growing; on every backend.
@Suite struct EventRetentionTests {
    @Test(arguments: StoreKind.available)
    func purgedEventsGoAndMessagesAndLaterEventsStay(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 2)
            for n in 0..<7 {
                _ = try await fixture.owner.sendMessage(SendMessageInput(
                    convoId: fixture.convoId, epoch: fixture.epoch, messageType: .app, hash: fakeHash(n), size: 1))
            }
            let reader = fixture.members[0].did
            let before = try await server.store.events(recipient: reader, after: 0, limit: 100)
            #expect(before.count >= 8)
            // Batches of 3: the sweep goes on until nothing older is left.
            let retention = EventRetention(store: server.store, retention: .zero, sweep: .seconds(1), batch: 3, logger: testLogger)
            let purged = try await retention.purgeNow(now: Date().addingTimeInterval(1))
            #expect(purged >= 8)
            #expect(try await StoreOnceTests.count(server, "event_payloads") == 0)
            #expect(try await StoreOnceTests.count(server, "events") == 0)
            #expect(try await server.store.events(recipient: reader, after: 0, limit: 100).isEmpty)
            // What happened is still readable, and new events follow the purged ones.
            let messages = try await fixture.members[0].getMessages(convoId: fixture.convoId).messages
            #expect(messages.count == 8)
            _ = try await fixture.owner.sendMessage(SendMessageInput(
                convoId: fixture.convoId, epoch: fixture.epoch, messageType: .app, hash: fakeHash(99), size: 1))
            let after = try await server.store.events(recipient: reader, after: 0, limit: 100)
            #expect(after.count == 1 && after[0].cursor > before.last!.cursor)
        }
    }

    /// The server sweeps by itself, beside the HTTP server.
    @Test(arguments: StoreKind.available)
    func theServerPurgesOldEventsByItself(kind: StoreKind) async throws {
        try await withServer(kind, configure: {
            $0.eventRetention = .seconds(3)
            $0.eventRetentionSweep = .milliseconds(100)
        }) { server in
            let start = ContinuousClock.now
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let written = try await StoreOnceTests.count(server, "events")
            // Under heavy load the sweep may already have taken them; only a quick setup proves they were there.
            if ContinuousClock.now - start < .seconds(2) { #expect(written > 0) }
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline, try await StoreOnceTests.count(server, "events") > 0 {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await StoreOnceTests.count(server, "events") == 0)
            #expect(try await StoreOnceTests.count(server, "event_payloads") == 0)
            #expect(try await fixture.members[0].getMessages(convoId: fixture.convoId).messages.count == 1)
        }
    }
}
