import Foundation
import ImprintServerTestSupport
import GRDB
@testable import ImprintServer
import Testing

/// Settings every connection of the SQLite store gets (`SQLiteDeliveryStore.init`).
@Suite struct SQLiteConnectionSettingsTests {
    @Test func connectionsKeepTemporaryDataInMemory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteDeliveryStore(path: directory.appendingPathComponent("db.sqlite").path)
        try await store.migrate()
        // 2 = MEMORY: savepoint journals of a group commit never spill to temporary files.
        let writer = try await store.groupCommit.write { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") }
        let reader = try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") }
        #expect(writer == 2)
        #expect(reader == 2)
        let foreignKeys = try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA foreign_keys") }
        #expect(foreignKeys == 1)
        try await store.shutdown()
    }
}
