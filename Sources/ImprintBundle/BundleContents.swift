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
        /// Damaged stretches of a log with valid frames after them (those frames were read).
        public var damage: [ChangeLogDamage] = []
    }

    public var metadata: BundleMetadata
    /// Snapshots sorted by path.
    public var snapshots: [LoadedSnapshot]
    /// Changes from logs, each hash once: canonical logs first (by device), then conflict
    /// copies, each in file order.
    public var changes: [LogRecord]
    public var logReports: [FileReport]
    public var snapshotReports: [FileReport]
    /// Files of this bundle that are known to be on their way (sync-tool downloads in
    /// progress, iCloud Drive placeholders), one line each: what is here is not yet the whole
    /// document.
    public var arrivalNotes: [String] = []
    /// True for a copy of a bundle that arrived without its metadata.json (a duplicate
    /// folder still being copied, or one whose files kept arriving after it was tidied);
    /// `metadata` is then the receiving bundle's.
    public var metadataMissing = false
    /// Damaged logs that a writer moved aside (kept for inspection, never merged).
    public var quarantined: [String] = []
    /// Where each change came from: the first log that holds it, else the first snapshot that
    /// covers it (for reports of what a merge brought in).
    public var sources: [RecordHash: String] = [:]

    /// Hashes present in `changes` or covered by any loaded snapshot.
    public var knownHashes: Set<RecordHash> {
        var set = Set(changes.map(\.hash))
        for snapshot in snapshots { set.formUnion(snapshot.file.coveredChanges) }
        return set
    }

    /// True when some file was skipped or had a damaged tail.
    public var hasDamage: Bool {
        (logReports + snapshotReports).contains { $0.error != nil || $0.droppedBytes > 0 }
    }
}
