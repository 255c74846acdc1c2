import Foundation
@testable import ImprintServer
import ImprintServerTestSupport
import ImprintDelivery
import PostgresNIO
import Testing

/// An event's payload and a Welcome are stored once however many members they reach
/// (`PendingEvent`), and a Welcome's bytes go when its last member confirmed, left or was
/// removed; on every backend.
@Suite struct StoreOnceTests {
    /// Rows of `table` (`filter` is a SQL condition), read from the store's own database.
    static func count(_ server: RunningServer, _ table: String, _ filter: String = "TRUE") async throws -> Int {
        let sql = "SELECT COUNT(*) FROM \(table) WHERE \(filter)"
        if let sqlite = server.store as? SQLiteDeliveryStore {
            return try await sqlite.pool.read { db in try Int.fetchOne(db, sql: sql.replacingOccurrences(of: "TRUE", with: "1")) ?? 0 }
        }
        let postgres = try #require(server.store as? PostgresDeliveryStore)
        var total = 0
        for try await value in try await postgres.client.query(PostgresQuery(unsafeSQL: sql), logger: testLogger).decode(Int.self) {
            total = value
        }
        return total
    }

    @Test(arguments: StoreKind.available)
    func aMessageToManyMembersStoresItsPayloadOnce(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 5)
            let payloads = try await Self.count(server, "event_payloads")
            let rows = try await Self.count(server, "events")
            _ = try await fixture.owner.sendMessage(SendMessageInput(
                convoId: fixture.convoId, epoch: fixture.epoch, messageType: .app, hash: fakeHash(1), size: 1))
            #expect(try await Self.count(server, "event_payloads") == payloads + 1)
            #expect(try await Self.count(server, "events") == rows + 6)
            // Every member reads the same event.
            for member in fixture.members {
                let events = try await server.store.events(recipient: member.did, after: 0, limit: 100)
                guard case .message(let event) = events.last?.payload else {
                    Issue.record("no message event for \(member.did)")
                    continue
                }
                #expect(event.message.hash == fakeHash(1))
            }
        }
    }

    @Test(arguments: StoreKind.available)
    func aWelcomeIsStoredOnceAndGoesWithItsLastMember(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server)
            let newcomers = (0..<4).map { _ in server.client() }
            let welcome = Data((0..<3_000).map { UInt8($0 % 251) })
            let added = try await fixture.owner.addMembers(AddMembersInput(
                convoId: fixture.convoId, epoch: fixture.epoch, dids: newcomers.map(\.did), commit: Data("commit-1".utf8),
                welcome: welcome))
            #expect(try await Self.count(server, "welcome_blobs") == 1)
            #expect(try await Self.count(server, "welcomes") == 4)
            for newcomer in newcomers {
                let got = try await newcomer.getWelcome(convoId: fixture.convoId)
                #expect(got.welcome == welcome && got.epoch == added.epoch)
            }
            // The events of the add: the commit to all five, each newcomer's `added` to the
            // owner and to itself, a `welcome` to each newcomer: no newcomer hears of the others.
            let ownerEvents = try await server.store.events(recipient: fixture.owner.did, after: 0, limit: 100)
            #expect(ownerEvents.filter { $0.payload.name == "membership" }.count == 4)
            let firstEvents = try await server.store.events(recipient: newcomers[0].did, after: 0, limit: 100)
            #expect(firstEvents.map(\.payload.name) == ["message", "membership", "welcome"])

            try await newcomers[0].confirmWelcome(convoId: fixture.convoId)
            try await newcomers[1].leaveConvo(convoId: fixture.convoId)
            let removed = try await fixture.owner.removeMember(RemoveMemberInput(
                convoId: fixture.convoId, epoch: added.epoch, did: newcomers[2].did, commit: Data("remove".utf8)))
            #expect(try await Self.count(server, "welcome_blobs") == 1, "one member still holds it")
            try await newcomers[3].confirmWelcome(convoId: fixture.convoId)
            #expect(try await Self.count(server, "welcome_blobs") == 0)
            #expect(try await Self.count(server, "welcomes") == 0)

            // A removed member added again gets the new Welcome, stored once more.
            let again = try await fixture.owner.addMembers(AddMembersInput(
                convoId: fixture.convoId, epoch: removed.epoch, dids: [newcomers[2].did], commit: Data("commit-3".utf8),
                welcome: Data("second".utf8)))
            #expect(try await newcomers[2].getWelcome(convoId: fixture.convoId).epoch == again.epoch)
            #expect(try await Self.count(server, "welcome_blobs") == 1)
        }
    }
}
