import GRDB
import NIOConcurrencyHelpers

/// Group commit for the SQLite store: concurrent write requests share one transaction.
///
/// SQLite has one writer, so the store's procedures run one after another anyway. What a
/// transaction per request adds is the fixed cost of each `BEGIN … COMMIT` (writing the
/// changed pages to the WAL once per commit, the lock dance, a hop onto the writer queue).
/// Here callers enqueue their work; whoever finds the queue idle schedules a drain on GRDB's
/// writer, which takes everything queued so far (up to `maxBatch`) and runs it in a single
/// `BEGIN IMMEDIATE … COMMIT`, each piece inside its own SAVEPOINT:
/// - a piece that throws rolls back to its savepoint only, so it leaves no trace and its caller
///   gets its own error, while the other pieces of the batch go on;
/// - results are handed out only after COMMIT succeeds; if the transaction itself fails
///   (BEGIN or COMMIT), every caller of the batch gets that error and nothing was written.
///
/// Pieces run in queue order on one connection, so each sees the effects of those before it,
/// exactly as if they had committed one by one: seqs stay gapless, epochs have one winner.
/// Under no load a batch is a single request, so latency is not traded for throughput.
package final class SQLiteGroupCommit: Sendable {
    private struct Job: Sendable {
        /// Runs the work in a savepoint and returns how to answer its caller after COMMIT.
        let run: @Sendable (Database) -> @Sendable () -> Void
        /// Answers the caller when the batch's transaction failed.
        let fail: @Sendable (any Error) -> Void
    }

    private struct State {
        var pending: [Job] = []
        var draining = false
        var transactions = 0
    }

    private let writer: DatabasePool
    private let state = NIOLockedValueBox(State())
    /// Upper bound on pieces per transaction, so one commit never holds the writer for long.
    let maxBatch: Int

    init(writer: DatabasePool, maxBatch: Int = 256) {
        self.writer = writer
        self.maxBatch = maxBatch
    }

    /// Runs `work` in the next group transaction and returns its result once that committed.
    package func write<Value: Sendable>(_ work: @escaping @Sendable (Database) throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            let job = Job(
                run: { db in
                    do {
                        var value: Value?
                        try db.inSavepoint {
                            value = try work(db)
                            return .commit
                        }
                        guard let value else { return { continuation.resume(throwing: GroupCommitError.noResult) } }
                        return { continuation.resume(returning: value) }
                    } catch {
                        return { continuation.resume(throwing: error) }
                    }
                },
                fail: { continuation.resume(throwing: $0) })
            let startDrain = state.withLockedValue { state in
                state.pending.append(job)
                guard !state.draining else { return false }
                state.draining = true
                return true
            }
            if startDrain {
                writer.asyncWriteWithoutTransaction { db in self.drain(db) }
            }
        }
    }

    /// Commits batches until the queue is empty, then marks the queue idle (under the same lock
    /// as `write` checks it, so no job is ever left without a drain).
    private func drain(_ db: Database) {
        while let batch = nextBatch() {
            var answers: [@Sendable () -> Void] = []
            answers.reserveCapacity(batch.count)
            do {
                try db.inTransaction(.immediate) {
                    for job in batch {
                        answers.append(job.run(db))
                        // Some errors (SQLITE_FULL, I/O errors) make SQLite roll back the whole
                        // transaction, not just the savepoint: the earlier pieces are gone too,
                        // so the batch fails as a whole. (GRDB would also refuse the later
                        // pieces' statements and the COMMIT; this stops at once and says why.)
                        guard db.isInsideTransaction else { throw GroupCommitError.transactionAborted }
                    }
                    return .commit
                }
            } catch {
                for job in batch { job.fail(error) }
                continue
            }
            state.withLockedValue { $0.transactions += 1 }
            for answer in answers { answer() }
        }
    }

    /// Work queued and not yet taken by a drain.
    var pendingCount: Int { state.withLockedValue { $0.pending.count } }

    /// Group transactions committed so far (each holding one or more pieces of work).
    var committedTransactions: Int { state.withLockedValue { $0.transactions } }

    private func nextBatch() -> [Job]? {
        state.withLockedValue { state in
            guard !state.pending.isEmpty else {
                state.draining = false
                return nil
            }
            let count = min(maxBatch, state.pending.count)
            let batch = Array(state.pending.prefix(count))
            state.pending.removeFirst(count)
            return batch
        }
    }
}

/// Failures of the group-commit machinery itself (not of the work it runs).
struct GroupCommitError: Error, Hashable, Sendable {
    var code: String
    /// The work returned without a value and without throwing (cannot happen with GRDB's savepoints).
    static let noResult = GroupCommitError(code: "noResult")
    /// SQLite rolled back the batch's whole transaction while running one piece of it.
    static let transactionAborted = GroupCommitError(code: "transactionAborted")
}
