import Foundation
import ImprintServerTestSupport
import ImprintDelivery
import ImprintServer
import PostgresNIO
import Testing

/// PostgreSQL draws event ids from one sequence at insert time, so the store must keep a
/// recipient's events from committing out of id order (`imprint_lock_event_recipients`).
/// Races that break this are too narrow to hit reliably over HTTP, so this test plays the
/// slow concurrent writer by hand: a transaction that locked a recipient and inserted an event
/// but has not committed. A sendMessage to that recipient's convo must wait for it; otherwise
/// its higher id would be visible first and a subscriber could move its cursor past the
/// earlier, still invisible id, and never see that event.
@Suite(.enabled(if: StoreKind.postgresURL != nil, "IMPRINT_TEST_POSTGRES_URL not set: PostgreSQL event order NOT TESTED"))
struct PostgresEventOrderTests {
    @Test func aSendWaitsForAnEarlierUncommittedEventOfTheSameRecipient() async throws {
        let location = try await PostgresTestDatabase.create()
        let server = try await RunningServer.start(store: try await StoreFactory.open(.postgres(location), logger: testLogger))
        let writer = try await PostgresTestDatabase.connect(to: location)
        do {
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let reader = fixture.members[0].did
            let start = try await server.store.events(recipient: reader, after: 0, limit: 100).last!.cursor

            try await writer.query("BEGIN", logger: testLogger)
            try await writer.query("SELECT imprint_lock_event_recipients(\([reader])::TEXT[])", logger: testLogger)
            var lateID: Int64?
            for try await id in try await writer.query(
                """
                WITH stored AS (
                    INSERT INTO event_payloads (convo_id, kind, payload, created_at)
                    VALUES ('elsewhere', 'welcome', '{"convoId":"elsewhere"}', 0) RETURNING id
                )
                INSERT INTO events (recipient, payload_id) SELECT \(reader), stored.id FROM stored RETURNING id
                """, logger: testLogger
            ).decode(Int64.self) {
                lateID = id
            }

            let send = Task {
                try await fixture.owner.sendMessage(SendMessageInput(
                    convoId: fixture.convoId, epoch: fixture.epoch, messageType: .app, hash: fakeHash(1), size: 1))
            }
            // Wait, on the database and not on a clock, until the send either stands blocked
            // behind the writer's transaction (the lock works) or has committed its message
            // without waiting (the lock is broken): whichever the database shows first.
            let observer = try await PostgresTestDatabase.connect(to: location)
            var writerPID: Int32 = 0
            for try await pid in try await writer.query("SELECT pg_backend_pid()", logger: testLogger).decode(Int32.self) { writerPID = pid }
            var blocked = false, committedWithoutWaiting = false
            let deadline = ContinuousClock.now + .seconds(60)
            while !blocked && !committedWithoutWaiting && ContinuousClock.now < deadline {
                for try await count in try await observer.query(
                    "SELECT COUNT(*)::BIGINT FROM pg_stat_activity WHERE \(writerPID) = ANY(pg_blocking_pids(pid))", logger: testLogger
                ).decode(Int64.self) { blocked = count > 0 }
                for try await count in try await observer.query(
                    "SELECT COUNT(*)::BIGINT FROM messages WHERE convo_id = \(fixture.convoId) AND seq = 2", logger: testLogger
                ).decode(Int64.self) { committedWithoutWaiting = count > 0 }
                if !blocked && !committedWithoutWaiting { try await Task.sleep(for: .milliseconds(10)) }
            }
            try await observer.close()
            #expect(blocked, "the send did not wait behind the uncommitted event (committed without waiting: \(committedWithoutWaiting))")
            let whileOpen = try await server.store.events(recipient: reader, after: start, limit: 100)
            #expect(whileOpen.isEmpty, "an event became visible above an uncommitted id: \(whileOpen.map(\.cursor))")

            try await writer.query("COMMIT", logger: testLogger)
            #expect(try await send.value.seq == 2)
            let events = try await server.store.events(recipient: reader, after: start, limit: 100)
            #expect(events.map(\.payload.name) == ["welcome", "message"])
            #expect(events.first?.cursor == lateID)
            try await writer.close()
            try await server.stop()
        } catch {
            try? await writer.close()
            try? await server.stop()
            throw error
        }
    }
}
