import ImprintFiles

extension DirectoryWatcher where Fingerprint == BundleFingerprint {
    /// Watches a bundle for other machines' files (for `imprint watch`): the bundle root,
    /// `changes/`, `snapshots/` and the parent directory (duplicate bundles), with
    /// `BundleFingerprint` as the fingerprint, so this device's own appends and lock files
    /// never wake it.
    public convenience init(layout: BundleLayout, ignoring device: DeviceID?, pollInterval: Duration = .seconds(2),
                            forcePolling: Bool = false) {
        self.init(directories: { [layout.root, layout.changesPath, layout.snapshotsPath, POSIX.parentDirectory(of: layout.root)] },
                  pollInterval: pollInterval, forcePolling: forcePolling,
                  fingerprint: { try BundleFingerprint.take(of: layout, ignoring: device) })
    }
}
