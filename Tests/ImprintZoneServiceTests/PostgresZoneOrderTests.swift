import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import ImprintZoneService
import PostgresNIO
import Testing

/// `fetchChanges` never skips a record whose transaction commits after a later-numbered one.
/// The interleaving is forced on the database, not left to timing: the test's own transaction
/// holds a row lock on the Delivery Service message that save A checks (`FOR KEY SHARE`), so A
/// stalls inside its transaction after it has begun; save B of the same zone starts next; a
/// reader reads while A is stalled; then A is released. Whatever numbering B got, the reader's
/// token must not have passed A's record. (With a global sequence and no zone lock, B would
/// commit change 2 while A still held 1 uncommitted, and the reader's token would skip A.)
@Suite(.enabled(if: StoreKind.postgresURL != nil, "IMPRINT_TEST_POSTGRES_URL not set: PostgreSQL zone change order NOT TESTED"))
struct PostgresZoneOrderTests {
    @Test func aLateCommitIsNeverSkipped() async throws {
        let location = try await PostgresTestDatabase.create()
        let server = try await ZoneTestServer.start(store: try await StoreFactory.open(.postgres(location), logger: testLogger))
        let holder = try await PostgresTestDatabase.connect(to: location)
        let observer = try await PostgresTestDatabase.connect(to: location)
        do {
            let fixture = try await SharedZoneFixture.make(on: server, members: 1)
            let member = fixture.members[0]
            let a = try await fixture.change(Data("payload-a".utf8), from: member, on: server, name: "a")
            let b = try await fixture.change(Data("payload-b".utf8), from: member, on: server, name: "b")
            guard case .number(let seqA) = a.fields?["seq"] else { throw SetupFailure() }
            let before = try await member.fetch(fixture.zoneId).changeToken

            try await holder.query("BEGIN", logger: testLogger)
            try await holder.query(
                "SELECT 1 FROM messages WHERE convo_id = \(fixture.convoId) AND seq = \(Int(seqA)) FOR UPDATE", logger: testLogger)
            let saveA = Task { try await member.save(fixture.zoneId, [a]) }
            try await waitForLockWaiters(1, observer)
            let finishedB = Flag()
            let saveB = Task {
                defer { finishedB.set() }
                return try await member.save(fixture.zoneId, [b])
            }
            // B either waits (this store: the zone row is A's until it commits) or has committed.
            try await waitForLockWaiters(2, observer, orUntil: { finishedB.value })

            let during = try await member.fetch(fixture.zoneId, since: before)
            #expect(during.records.isEmpty, "a change became visible while an earlier one was uncommitted: \(during.records.map(\.recordName))")

            try await holder.query("COMMIT", logger: testLogger)
            let savedA = try await saveA.value
            let savedB = try await saveB.value
            #expect(Self.change(savedA[0].changeToken) < Self.change(savedB[0].changeToken))
            let after = try await member.fetch(fixture.zoneId, since: during.changeToken)
            #expect(after.records.map(\.recordName) == ["a", "b"])
            try await holder.close()
            try await observer.close()
            try await server.stop()
        } catch {
            try? await holder.close()
            try? await observer.close()
            try? await server.stop()
            throw error
        }
    }

    struct SetupFailure: Error {}

    static func change(_ token: String) -> Int { Int(token.split(separator: ".").last ?? "") ?? -1 }

    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var isSet = false
        func set() { lock.withLock { isSet = true } }
        var value: Bool { lock.withLock { isSet } }
    }

    /// Polls `pg_stat_activity` (the database's own record of who waits) until `count` backends wait for
    /// a lock in this database, or `orUntil` holds. Bounded: fails after ~30 s.
    func waitForLockWaiters(_ count: Int, _ connection: PostgresConnection, orUntil done: @Sendable () -> Bool = { false }) async throws {
        for _ in 0..<3000 {
            var waiting = 0
            for try await n in try await connection.query(
                "SELECT COUNT(*)::BIGINT FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
                logger: testLogger
            ).decode(Int.self) {
                waiting = n
            }
            if waiting >= count || done() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("never saw \(count) lock waiters")
    }
}
