/// How long a copy made by a sync tool must stay untouched before Imprint trusts that it has
/// finished arriving and may delete it once merged.
///
/// Sync tools write in pieces: Syncthing and Dropbox fill a temporary file and rename it,
/// NFS, rsync `--inplace` and plain copiers write the final name from the first byte, a
/// folder usually appears before the files in it, and iCloud Drive shows a placeholder first.
/// A copy is deleted only when every byte of it is merged into this device's own durable
/// files **and** nothing touched it (size, modification time, status-change time of every
/// file in it) for `quietPeriod`. A copier that stalls longer than that mid-file and then
/// writes on loses nothing either: its later bytes land in a file or folder that no longer
/// has a bundle around it, which the next sync recognises and merges (see
/// `BundleStore.duplicateBundles()`).
///
/// ```swift
/// // `imprint sync` trusts a copy after 5 s of quiet, `imprint watch` after 30 s.
/// let report = try store.tidyConflictCopies(settle: .sync)
/// for (path, reason) in report.kept { print("kept \(path): \(reason)") }
/// ```
public struct SettlePolicy: Sendable, Equatable {
    /// A copy must be untouched for this long before it may be deleted.
    public var quietPeriod: Duration

    public init(quietPeriod: Duration) {
        self.quietPeriod = quietPeriod
    }

    /// One-shot commands (`imprint sync`, opening a bundle): 5 seconds.
    public static let sync = SettlePolicy(quietPeriod: .seconds(5))
    /// Long-running watchers, which see files the moment they start arriving: 30 seconds.
    public static let watch = SettlePolicy(quietPeriod: .seconds(30))
    /// No wait: only for copies the caller wrote whole itself (tests, archives it unpacked).
    /// A copy is still kept while it changes during the merge.
    public static let immediate = SettlePolicy(quietPeriod: .zero)
}
