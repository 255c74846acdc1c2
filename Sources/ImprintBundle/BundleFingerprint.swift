#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ImprintFiles

/// A cheap summary of the files other machines can change in a bundle: names, sizes,
/// modification times and inodes of metadata.json and its conflict copies, every log and
/// snapshot except this device's own canonical ones, and sibling duplicate bundles. Two equal
/// fingerprints mean nothing arrived that a merge would see. This device's own writes do not
/// change it, so a watcher does not wake itself up.
public struct BundleFingerprint: Sendable, Equatable {
    public struct Stamp: Sendable, Equatable {
        public var size: Int64
        public var modifiedNanoseconds: Int64
        public var inode: UInt64
    }

    /// Path → stamp.
    public var files: [String: Stamp]

    public static func take(of layout: BundleLayout, ignoring device: DeviceID?) throws -> BundleFingerprint {
        var files: [String: Stamp] = [:]
        func add(_ path: String) {
            var st = stat()
            guard lstat(path, &st) == 0 else { return }
            #if canImport(Darwin)
            let nanos = Int64(st.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(st.st_mtimespec.tv_nsec)
            #else
            let nanos = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
            #endif
            files[path] = Stamp(size: Int64(st.st_size), modifiedNanoseconds: nanos, inode: UInt64(st.st_ino))
        }
        add(layout.metadataPath)
        let inventory = try layout.inventory()
        inventory.metadataConflictCopies.forEach(add)
        for entry in inventory.changeLogs + inventory.snapshots {
            if entry.conflictCopy == nil, entry.device == device { continue }
            add(entry.path)
        }
        let parent = POSIX.parentDirectory(of: layout.root)
        let name = POSIX.lastComponent(of: layout.root)
        if POSIX.isDirectory(parent) {
            for sibling in try POSIX.listDirectory(parent) where sibling != name {
                if ConflictCopyName.rootOriginal(of: sibling) == name {
                    add(parent + "/" + sibling + "/" + BundleLayout.metadataName)
                }
            }
        }
        return BundleFingerprint(files: files)
    }
}
