/// What `DocumentBundle.sync()` (or a merge) did.
public struct SyncReport: Sendable, Equatable {
    /// Changes the document gained.
    public var changesMerged = 0
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
