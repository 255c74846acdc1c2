import Foundation
import ImprintFiles
import ImprintKeys
import ImprintMLS

extension SharedDocument {
    /// True inside an operation of this task (nested calls run without waiting again).
    @TaskLocal static var insideOperation = false

    /// The lock file that makes operations on one convo of one home exclusive across
    /// processes: `imprint push` while `imprint live` runs waits for `live`'s step to end.
    nonisolated var lockPath: String { account.home.path + "/sync/\(convoId).lock" }

    /// Runs one operation alone: no other operation of this object (actor methods interleave
    /// at suspension points) and no other process on this home and convo runs meanwhile, and
    /// the state is read again from disk first (another process may have moved it on). Two
    /// writers of one group state would otherwise overwrite each other's ratchet and encrypt
    /// twice with one generation.
    ///
    /// `reloadingState: false` skips that read, for an operation that writes neither the sync
    /// state nor the MLS state (an edit: it writes the bundle, and seals its preview with the
    /// epoch in memory, which at worst is one that another process has since left: the
    /// members drop that preview and the durable copy follows). The next operation that
    /// writes them reads them first as always.
    func exclusive<T: Sendable>(reloadingState: Bool = true, _ body: () async throws -> T) async throws -> T {
        if Self.insideOperation { return try await body() }
        await enterGate()
        defer { leaveGate() }
        let held = try await FileLock(path: lockPath, timeout: .seconds(600)).acquireWithoutBlocking()
        defer { held.release() }
        if reloadingState { try reloadPersistedState() }
        return try await Self.$insideOperation.withValue(true) { try await body() }
    }

    /// Reads the persisted state again for a reader outside the operation gate (`status`,
    /// `members`), unless an operation of this object is under way: its state in memory is
    /// then newer than the disk's (keys consumed, a commit applied, not yet flushed), and
    /// replacing it in the middle of the operation would undo part of what it did.
    func reloadForReading() throws {
        guard !operationRunning else { return }
        try reloadPersistedState()
    }

    /// Reads the sync state, the MLS state and the cursor again from disk. Bytes equal to
    /// those this object last wrote or read are not decoded again: the value they decoded to
    /// is taken instead (`persistedState`, `persistedGroup`), so an operation still starts
    /// from exactly what is stored, at the price of a read and a hash.
    func reloadPersistedState() throws {
        if let bytes = try SyncState.storedBytes(home: home, convoId: convoId) {
            let path = SyncState.path(home: home, convoId: convoId)
            var saved = try persistedState.value(of: bytes) { try SyncState(stored: $0, path: path) }
            saved.bundlePath = state.bundlePath
            state = saved
        }
        if let record = try account.keyStore.groupState(convo: convoId, for: account.identity.did) {
            group = try persistedGroup.value(of: record.state) { try MLSGroup(serializedState: $0) }
            cursor = record.cursor
        }
    }

    func enterGate() async {
        guard operationRunning else {
            operationRunning = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func leaveGate() {
        if waiters.isEmpty {
            operationRunning = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
