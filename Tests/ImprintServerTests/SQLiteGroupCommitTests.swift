import Foundation
import ImprintServerTestSupport
import GRDB
@testable import ImprintServer
import Testing

/// `SQLiteGroupCommit` on its own: pieces of work that share a transaction succeed or fail
/// one by one, and a transaction that cannot commit fails all of them and writes nothing.
@Suite struct SQLiteGroupCommitTests {
    struct PieceFailed: Error, Equatable { var n: Int }

    static func makePool() throws -> DatabasePool {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-gc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let pool = try DatabasePool(path: directory.appendingPathComponent("db.sqlite").path)
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE rows (n INTEGER PRIMARY KEY);
                CREATE TABLE parents (id INTEGER PRIMARY KEY);
                CREATE TABLE children (parent INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED);
                """)
        }
        return pool
    }

    /// Holds the writer with one piece until `count` more are queued, so they form one batch.
    static func runBatched<Value: Sendable>(
        _ commit: SQLiteGroupCommit, count: Int, _ work: @escaping @Sendable (Int, Database) throws -> Value
    ) async -> [Int: Result<Value, any Error>] {
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let blocker = Task {
            try await commit.write { _ in
                started.signal()
                gate.wait()
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                started.wait()
                continuation.resume()
            }
        }
        return await withTaskGroup(of: (Int, Result<Value, any Error>).self) { group in
            for n in 0..<count {
                group.addTask {
                    do { return (n, .success(try await commit.write { db in try work(n, db) })) } catch { return (n, .failure(error)) }
                }
            }
            while commit.pendingCount < count { try? await Task.sleep(for: .milliseconds(5)) }
            gate.signal()
            _ = try? await blocker.value
            var results: [Int: Result<Value, any Error>] = [:]
            for await (n, result) in group { results[n] = result }
            return results
        }
    }

    @Test func aFailingPieceDoesNotFailTheOthersInItsBatch() async throws {
        let pool = try Self.makePool()
        let commit = SQLiteGroupCommit(writer: pool)
        let results = await Self.runBatched(commit, count: 20) { n, db in
            try db.execute(sql: "INSERT INTO rows (n) VALUES (?)", arguments: [n])
            if n % 3 == 0 { throw PieceFailed(n: n) }  // after writing: its row must vanish
            return n * 10
        }
        // The blocker's transaction, then all twenty pieces in one.
        #expect(commit.committedTransactions == 2)
        for n in 0..<20 {
            switch results[n] {
            case .success(let value): #expect(n % 3 != 0 && value == n * 10)
            case .failure(let error): #expect(n % 3 == 0 && (error as? PieceFailed) == PieceFailed(n: n))
            case nil: Issue.record("no result for \(n)")
            }
        }
        let stored = try await pool.read { db in try Int.fetchAll(db, sql: "SELECT n FROM rows ORDER BY n") }
        #expect(stored == (0..<20).filter { $0 % 3 != 0 })
    }

    @Test func piecesSeeTheEffectsOfEarlierPiecesOfTheirBatch() async throws {
        let pool = try Self.makePool()
        let commit = SQLiteGroupCommit(writer: pool)
        // Each piece takes the next number, as sendMessage takes the next seq.
        let results = await Self.runBatched(commit, count: 30) { _, db in
            let next = (try Int.fetchOne(db, sql: "SELECT MAX(n) FROM rows") ?? 0) + 1
            try db.execute(sql: "INSERT INTO rows (n) VALUES (?)", arguments: [next])
            return next
        }
        let values = try results.values.map { try $0.get() }.sorted()
        #expect(values == Array(1...30))
    }

    @Test func aTransactionThatCannotCommitFailsEveryPieceAndWritesNothing() async throws {
        let pool = try Self.makePool()
        let commit = SQLiteGroupCommit(writer: pool)
        // Piece 3 breaks a deferred foreign key: only COMMIT notices, and it fails the batch.
        let results = await Self.runBatched(commit, count: 6) { n, db in
            try db.execute(sql: "INSERT INTO rows (n) VALUES (?)", arguments: [n])
            if n == 3 { try db.execute(sql: "INSERT INTO children (parent) VALUES (42)") }
            return n
        }
        for n in 0..<6 {
            guard case .failure(let error) = results[n] else { Issue.record("piece \(n) succeeded"); continue }
            #expect((error as? DatabaseError)?.resultCode == .SQLITE_CONSTRAINT, "\(error)")
        }
        let stored = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM rows") }
        #expect(stored == 0)
        // The writer is usable again afterwards.
        #expect(try await commit.write { db in try db.execute(sql: "INSERT INTO rows (n) VALUES (100)"); return 1 } == 1)
    }

    @Test func aPieceThatEndsTheWholeTransactionFailsTheBatch() async throws {
        let pool = try Self.makePool()
        let commit = SQLiteGroupCommit(writer: pool)
        // Piece 2 ends the transaction as SQLite does on SQLITE_FULL or an I/O error: the pieces
        // before it are rolled back with it, and those after it must not run on without one.
        let results = await Self.runBatched(commit, count: 5) { n, db in
            try db.execute(sql: "INSERT INTO rows (n) VALUES (?)", arguments: [n])
            if n == 2 { try db.execute(sql: "ROLLBACK") }
            return n
        }
        for n in 0..<5 {
            if case .success = results[n] { Issue.record("piece \(n) succeeded") }
        }
        let stored = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM rows") }
        #expect(stored == 0)
        #expect(try await commit.write { db in try db.execute(sql: "INSERT INTO rows (n) VALUES (100)"); return 1 } == 1)
    }
}
