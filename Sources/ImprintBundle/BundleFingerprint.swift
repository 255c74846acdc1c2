#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ImprintFiles

/// A cheap summary of the files other machines can change in a bundle: names, sizes,
/// modification and status-change times and inodes of metadata.json and its conflict copies,
/// every log and snapshot except this device's own canonical ones, sync-tool downloads and
/// placeholders, and the data files of sibling duplicate bundles (with or without their
/// metadata.json). Two equal fingerprints mean nothing arrived that a merge would see. This
/// device's own writes do not change it, so a watcher does not wake itself up.
public struct BundleFingerprint: Sendable, Equatable {
    /// Path → stamp.
    public var files: [String: FileStamp]

    public static func take(of layout: BundleLayout, ignoring device: DeviceID?) throws -> BundleFingerprint {
        var files: [String: FileStamp] = [:]
        func add(_ path: String) {
            if let stamp = FileStamp.take(path) { files[path] = stamp }
        }
        func addData(of layout: BundleLayout, skipping device: DeviceID?) throws {
            add(layout.metadataPath)
            let inventory = try layout.inventory()
            inventory.metadataConflictCopies.forEach(add)
            inventory.downloading.forEach(add)
            inventory.placeholders.keys.forEach(add)
            for entry in inventory.changeLogs + inventory.snapshots {
                if entry.conflictCopy == nil, entry.device == device { continue }
                add(entry.path)
            }
        }
        try addData(of: layout, skipping: device)
        let parent = POSIX.parentDirectory(of: layout.root)
        let name = POSIX.lastComponent(of: layout.root)
        if POSIX.isDirectory(parent) {
            for sibling in try POSIX.listDirectory(parent) where sibling != name {
                guard ConflictCopyName.rootOriginal(of: sibling) == name else { continue }
                let path = parent + "/" + sibling
                add(path)
                if POSIX.isDirectory(path) {
                    try? addData(of: BundleLayout(root: path), skipping: nil)
                }
            }
        }
        return BundleFingerprint(files: files)
    }
}
