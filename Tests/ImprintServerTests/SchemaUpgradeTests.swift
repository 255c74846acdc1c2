import Foundation
@testable import ImprintServer
import ImprintServerTestSupport
import ImprintDelivery
import PostgresNIO
import Testing

/// A database made by each earlier schema version (the migrations are the schema's history, so
/// applying the first k makes version k exactly) upgrades in place on `migrate()`, keeps the
/// rows a v1 server wrote, and then serves the v1.1 calls.
@Suite struct SchemaUpgradeTests {
    /// Rows a v1 server could have written: a convo of two with one commit (with bytes) and one app message.
    static let v1Rows = [
        "INSERT INTO convos (id, creator, title, cipher_suite, epoch, last_seq, created_at) VALUES ('old', 'did:key:a', 'T', 1, 1, 2, 1000)",
        "INSERT INTO members (convo_id, did, joined_at, active) VALUES ('old', 'did:key:a', 1000, TRUE)",
        "INSERT INTO members (convo_id, did, joined_at, active) VALUES ('old', 'did:key:b', 1001, TRUE)",
        """
        INSERT INTO messages (convo_id, seq, epoch, sender, message_type, hash, size, sent_at, record_name, commit_blob)
        VALUES ('old', 1, 0, 'did:key:a', 'commit', '\(CommitDigest.hex(Data("c".utf8)))', 1, 1002, NULL, X'63')
        """,
        """
        INSERT INTO messages (convo_id, seq, epoch, sender, message_type, hash, size, sent_at, record_name, commit_blob)
        VALUES ('old', 2, 1, 'did:key:b', 'app', '\(fakeHash(2))', 2, 1003, 'r2', NULL)
        """,
        // A Welcome not yet confirmed and an event, in the tables' shape before store-once.
        "INSERT INTO welcomes (convo_id, did, welcome, epoch) VALUES ('old', 'did:key:b', X'63', 1)",
        """
        INSERT INTO events (recipient, convo_id, kind, payload, created_at)
        VALUES ('did:key:b', 'old', 'welcome', '{"convoId":"old"}', 1004)
        """,
    ]

    /// Every earlier schema version of each store in which a v1 server's rows (above) can be
    /// written: a database made by migrations below `before`, up to the store-once migration
    /// (SQLite 5, PostgreSQL 8) that changed the shape of `welcomes` and `events`. Each is
    /// upgraded through every later migration.
    static let versions: [(StoreKind, Int)] = StoreKind.available.flatMap { kind in
        (kind == .sqlite ? Array(2...5) : Array(2...8)).map { (kind, $0) }
    }

    @Test(arguments: versions)
    func previousSchemaUpgradesAndKeepsItsData(kind: StoreKind, before: Int) async throws {
        let store: any DeliveryStore
        switch kind {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-upgrade-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let sqlite = try SQLiteDeliveryStore(path: directory.appendingPathComponent("delivery.sqlite").path)
            try await sqlite.applyMigrations(SQLiteSchema.migrations.filter { $0.version < before })
            let rows = Self.v1Rows.map { $0.replacingOccurrences(of: "TRUE", with: "1") }
            try await sqlite.pool.write { db in for sql in rows { try db.execute(sql: sql) } }
            store = sqlite
        case .postgres:
            let postgres = PostgresDeliveryStore(location: try await PostgresTestDatabase.create(), logger: testLogger)
            try await postgres.applyMigrations(PostgresSchema.migrations.filter { $0.version < before })
            let rows = Self.v1Rows.map { $0.replacingOccurrences(of: "X'63'", with: "'\\x63'::bytea") }
            for sql in rows { try await postgres.client.query(PostgresQuery(unsafeSQL: sql), logger: testLogger) }
            store = postgres
        }
        do {
            try await store.migrate()
            try await store.migrate()  // idempotent
            let kept = try await store.messages(convoId: "old", caller: "did:key:b", sinceSeq: 0, limit: 10)
            #expect(kept.map(\.seq) == [1, 2])
            #expect(kept.map(\.commit) == [Data("c".utf8), nil])
            #expect(kept[1].recordName == "r2")
            let welcome = try await store.welcome(convoId: "old", did: "did:key:b")
            #expect(welcome?.welcome == Data("c".utf8) && welcome?.epoch == 1)
            let oldEvents = try await store.events(recipient: "did:key:b", after: 0, limit: 10)
            #expect(oldEvents.count == 1 && oldEvents.first?.payload.name == "welcome")
            let now = Date()
            let message = NewMessage(
                convoId: "old", sender: "did:key:b", epoch: 1, messageType: .app, hash: fakeHash(3), size: 3,
                recordName: nil, clientMessageId: "after-upgrade", now: now)
            let seconds = Int64(now.timeIntervalSince1970)
            let first = try await store.sendMessage(
                message, admitting: TokenAdmission(issuer: "did:key:b", jti: "j1", forgetAfter: seconds + 300, now: seconds))
            let retry = try await store.sendMessage(
                message, admitting: TokenAdmission(issuer: "did:key:b", jti: "j2", forgetAfter: seconds + 300, now: seconds))
            #expect(first.seq == 3)
            #expect(retry.seq == 3 && retry.epoch == 1)
            #expect(retry.recipients.map(\.did) == ["did:key:a"])
            let convos = try await store.convos(memberDID: "did:key:a")
            #expect(convos.map(\.id) == ["old"])
            #expect(convos.first?.admins == ["did:key:a"])
            // Events written after the upgrade come after the kept ones (cursors only grow).
            let newEvents = try await store.events(recipient: "did:key:a", after: 0, limit: 10)
            #expect(!newEvents.isEmpty && newEvents.allSatisfy { $0.cursor > oldEvents.first?.cursor ?? .max })
            try await store.deleteWelcome(convoId: "old", did: "did:key:b")
            #expect(try await store.welcome(convoId: "old", did: "did:key:b") == nil)
            try await store.shutdown()
        } catch {
            try? await store.shutdown()
            throw error
        }
    }
}
