/// Everything the CRDT engine needs to rebuild a document from one bundle: every snapshot and
/// the union (by hash) of every change in every log and conflict copy, plus a report of what
/// was skipped or damaged.
public struct BundleContents: Sendable {
    /// One snapshot file that was loaded.
    public struct LoadedSnapshot: Sendable {
        public var path: String
        public var device: DeviceID
        public var isConflictCopy: Bool
        public var file: SnapshotFile
    }

    /// How one file read.
    public struct FileReport: Sendable, Equatable {
        public var path: String
        public var device: DeviceID
        public var isConflictCopy: Bool
        /// Valid change records read (before de-duplication).
        public var records: Int
        /// Bytes past the last valid frame (torn tail or corruption), ignored.
        public var droppedBytes: Int64
        /// Set when the whole file was skipped (corrupt header, corrupt snapshot).
        public var error: BundleError?
    }

    public var metadata: BundleMetadata
    /// Snapshots sorted by path.
    public var snapshots: [LoadedSnapshot]
    /// Changes from logs, each hash once: canonical logs first (by device), then conflict
    /// copies, each in file order.
    public var changes: [ChangeRecord]
    public var logReports: [FileReport]
    public var snapshotReports: [FileReport]

    /// Hashes present in `changes` or covered by any loaded snapshot.
    public var knownHashes: Set<ChangeHash> {
        var set = Set(changes.map(\.hash))
        for snapshot in snapshots { set.formUnion(snapshot.file.coveredChanges) }
        return set
    }

    /// True when some file was skipped or had a damaged tail.
    public var hasDamage: Bool {
        (logReports + snapshotReports).contains { $0.error != nil || $0.droppedBytes > 0 }
    }
}
