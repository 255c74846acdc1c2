/// What `DocumentBundle.sync()` (or a merge) did.
public struct SyncReport: Sendable, Equatable {
    /// Changes new to this device: in the document now, not in this device's own log or
    /// snapshot before the sync (another device's log, a conflict copy, a duplicate bundle).
    public var changesMerged = 0
    /// Where the merged changes came from: file or bundle path → number of changes.
    public var mergedFrom: [String: Int] = [:]
    /// Files known to be still on their way (sync-tool downloads, iCloud placeholders).
    public var incomplete: [String] = []
    /// Damaged logs moved aside whole (never merged or deleted; their intact changes were kept).
    public var quarantined: [String] = []
    /// Changes copied into this device's log (from conflict copies, duplicates, other copies).
    public var changesPersisted = 0
    /// Conflict-copy files and duplicate bundles deleted after their content was safe.
    public var removed: [String] = []
    /// Conflict copies kept, with the reason.
    public var kept: [String: String] = [:]
    /// Whether this device wrote a new snapshot.
    public var snapshotWritten = false

    /// An empty report.
    public init() {}
}
