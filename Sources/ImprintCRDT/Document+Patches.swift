import Foundation

/// The patches of one change as a document applied it, for views that follow the document
/// (``Document/patches(bufferingPolicy:)``).
public struct PatchBatch: Sendable, Hashable {
    /// Where the change came from.
    public enum Origin: Sendable, Hashable {
        /// A transaction of this replica (``Document/change(message:time:_:)``).
        case local
        /// An undo or redo of this replica.
        case undo
        /// Changes of other replicas (`apply` and `merge`).
        case remote
    }

    public var origin: Origin
    /// In the order to apply to a view of the document as it was just before.
    public var patches: [Patch]

    public init(origin: Origin, patches: [Patch]) {
        self.origin = origin
        self.patches = patches
    }
}

/// The subscribers of one document's patch stream; subscribing, unsubscribing (a consumer
/// that stops iterating, from any thread) and publishing are safe from any thread.
final class PatchSubscribers: @unchecked Sendable {
    private let lock = NSLock()
    private var next: UInt64 = 0
    private var continuations: [UInt64: AsyncStream<PatchBatch>.Continuation] = [:]

    func subscribe(bufferingPolicy: AsyncStream<PatchBatch>.Continuation.BufferingPolicy) -> AsyncStream<PatchBatch> {
        let (stream, continuation) = AsyncStream.makeStream(of: PatchBatch.self, bufferingPolicy: bufferingPolicy)
        let id = lock.withLock {
            next += 1
            continuations[next] = continuation
            return next
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }

    private func unsubscribe(_ id: UInt64) {
        _ = lock.withLock { continuations.removeValue(forKey: id) }
    }

    /// Yields `batch` to every subscriber; returns whether any is left.
    func publish(_ batch: PatchBatch) -> Bool {
        let current = lock.withLock { Array(continuations.values) }
        if !batch.patches.isEmpty { for continuation in current { continuation.yield(batch) } }
        return !current.isEmpty
    }
}

extension Document {
    /// Patches for every change applied to this document from now on, local or remote, one
    /// batch per change (a transaction, an undo or redo, or one `apply`/`merge` call), each
    /// in the order to apply to a view of the document as it was just before: bind a view
    /// by applying them as they come. Cheap when nobody listens (no patch is built).
    ///
    /// Local transactions yield the patches of their own edits as they were made; remote
    /// changes yield ``diff(from:to:)`` between the heads before and after. The stream ends
    /// when the consumer stops iterating (the document notices at its next change and stops
    /// building patches once nobody is left). By default every batch is kept until read; pass
    /// `.bufferingNewest(n)` to let a slow consumer skip (then re-read the document).
    ///
    /// ```swift
    /// let doc = Document()
    /// Task {
    ///     for await batch in doc.patches() {
    ///         for patch in batch.patches { view.apply(patch) }
    ///     }
    /// }
    /// doc.change { tx in try tx.splice(body, at: 0, insert: "Hi") }   // -> [.splice(body, 0, "Hi")]
    /// ```
    public func patches(bufferingPolicy: AsyncStream<PatchBatch>.Continuation.BufferingPolicy = .unbounded) -> AsyncStream<PatchBatch> {
        patchesWanted = true
        return patchSubscribers.subscribe(bufferingPolicy: bufferingPolicy)
    }

    /// Notes a local edit's patch while anyone listens.
    func notePatch(_ patch: @autoclosure () -> Patch) {
        if patchesWanted { localPatches.append(patch()) }
    }

    /// Publishes the patches a transaction collected.
    func publishLocalPatches() {
        guard !localPatches.isEmpty else { return }
        let batch = PatchBatch(origin: replaying ? .undo : .local, patches: localPatches)
        localPatches = []
        patchesWanted = patchSubscribers.publish(batch)
    }

    /// Runs `body` (which integrates remote changes) and, while anyone listens, publishes
    /// their patches: built op by op as they are integrated when every op is a text insert or
    /// removal in a text without marks (typing, the common case: each costs a position
    /// lookup), otherwise the diff between the heads before and after (which reads the
    /// whole document at both versions).
    func publishingRemotePatches<T>(_ body: () throws -> T) rethrows -> T {
        guard patchesWanted else { return try body() }
        let before = currentHeads
        let recordsBefore = recordCount
        remotePatches = RemotePatchLog()
        var completed = false
        defer {
            let log = remotePatches
            remotePatches = nil
            let after = currentHeads
            if after != before {
                let patches: [Patch]?
                if completed, let log, !log.needsDiff, log.changes == recordCount - recordsBefore {
                    patches = log.patches
                } else {
                    remoteBatchesDiffed += 1
                    patches = try? diff(from: before, to: after)
                }
                if let patches { patchesWanted = patchSubscribers.publish(PatchBatch(origin: .remote, patches: patches)) }
            }
        }
        let result = try body()
        completed = true
        return result
    }
}

/// The patches of remote changes as they are integrated, in the order to apply to a view of
/// the document as it was before the first (`Document.publishingRemotePatches`).
struct RemotePatchLog {
    var patches: [Patch] = []
    /// Changes whose every op was logged.
    var changes = 0
    /// An op was integrated whose patch this log does not build: the batch is a diff instead.
    var needsDiff = false
}
