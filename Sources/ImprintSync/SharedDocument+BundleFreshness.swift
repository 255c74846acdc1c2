import ImprintFiles
import ImprintStore

extension SharedDocument {
    /// A cheap stamp of the bundle's change logs and snapshots (sizes, times, inodes): it moves
    /// whenever any process, or a folder-sync tool, writes there.
    nonisolated func bundleStamp() -> [TreeStamp] {
        [TreeStamp.take(bundlePath + "/changes"), TreeStamp.take(bundlePath + "/snapshots")]
    }

    /// Re-reads the bundle when its files moved since this object last read them (reading a
    /// whole bundle costs its size; most operations find nothing new).
    func reloadBundleIfChanged() throws {
        let now = bundleStamp()
        guard now != seenBundleStamp else { return }
        _ = try bundle.reload()
        seenBundleStamp = bundleStamp()
    }

    /// Runs one of this object's own writes to the bundle; its effect on the stamp is not
    /// news. A write by someone else in between (the stamp had already moved) still is.
    /// `justReloaded`: `reloadBundleIfChanged` ran right before, so the stamp it left is taken
    /// as the one before the write instead of reading the bundle's directories again (an
    /// edit does this: the read is on the way to the others' screens).
    func writingToBundle<T>(justReloaded: Bool = false, _ body: () throws -> T) throws -> T {
        let before = justReloaded ? seenBundleStamp : bundleStamp()
        let result = try body()
        if before == seenBundleStamp { seenBundleStamp = bundleStamp() }
        return result
    }
}
