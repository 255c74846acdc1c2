import ImprintFiles

/// Where things live inside a `.imprint` bundle directory.
///
/// ```
/// paper.imprint/
///   metadata.json              BundleMetadata
///   changes/<device>.log       one append-only change log per device (ChangeLogFormat)
///   snapshots/<device>.snapshot one compacted snapshot per device (SnapshotFile)
///   assets/<sha256 hex>        content-addressed assets (AssetStore)
///   locks/<device>.lock        flock targets for that device's log
///   locks/bundle.lock          flock target for bundle-wide writes (metadata, tidying)
/// ```
/// Anything else is ignored, so newer versions can add files.
public struct BundleLayout: Sendable, Equatable {
    public static let bundleExtension = "imprint"
    public static let metadataName = "metadata.json"
    public static let changesDirectory = "changes"
    public static let snapshotsDirectory = "snapshots"
    public static let assetsDirectory = "assets"
    public static let locksDirectory = "locks"
    public static let logExtension = "log"
    public static let snapshotExtension = "snapshot"

    /// The bundle directory.
    public let root: String

    public init(root: String) {
        var trimmed = root
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.root = trimmed
    }

    public var metadataPath: String { root + "/" + Self.metadataName }
    public var changesPath: String { root + "/" + Self.changesDirectory }
    public var snapshotsPath: String { root + "/" + Self.snapshotsDirectory }
    public var assetsPath: String { root + "/" + Self.assetsDirectory }
    public var locksPath: String { root + "/" + Self.locksDirectory }

    public func changeLogPath(for device: DeviceID) -> String {
        "\(changesPath)/\(device.rawValue).\(Self.logExtension)"
    }

    public func snapshotPath(for device: DeviceID) -> String {
        "\(snapshotsPath)/\(device.rawValue).\(Self.snapshotExtension)"
    }

    public func logLock(for device: DeviceID) -> FileLock {
        FileLock(path: "\(locksPath)/\(device.rawValue).lock")
    }

    public var bundleLock: FileLock { FileLock(path: locksPath + "/bundle.lock") }

    /// Creates the directory skeleton (idempotent); does not write metadata.
    public func createDirectories() throws {
        try POSIX.makeDirectories(root)
        for directory in [changesPath, snapshotsPath, assetsPath, locksPath] {
            try POSIX.makeDirectory(directory)
        }
        try POSIX.fsyncDirectory(root)
    }

    /// What a file name inside `changes/` or `snapshots/` is.
    public enum FileRole: Sendable, Equatable {
        /// The canonical file of a device.
        case canonical(DeviceID)
        /// A sync tool's conflict copy of (ultimately) a device's canonical file.
        case conflictCopy(of: DeviceID, ConflictCopyName)
        /// Anything else (temporaries, files of newer versions): ignored.
        case ignored
    }

    /// Classifies a name in `changes/` (extension `log`) or `snapshots/` (`snapshot`).
    public static func role(ofName name: String, fileExtension: String) -> FileRole {
        if AtomicFile.isTemporaryName(name) { return .ignored }
        let suffix = "." + fileExtension
        if name.hasSuffix(suffix), let device = try? DeviceID(String(name.dropLast(suffix.count))) {
            return .canonical(device)
        }
        guard let copy = ConflictCopyName.parse(name),
              let root = ConflictCopyName.rootOriginal(of: name),
              root.hasSuffix(suffix),
              let device = try? DeviceID(String(root.dropLast(suffix.count)))
        else { return .ignored }
        return .conflictCopy(of: device, copy)
    }

    /// Lists the data files of the bundle: every canonical log and snapshot and every
    /// conflict copy of one, plus conflict copies of metadata.json.
    public func inventory() throws -> BundleInventory {
        var inventory = BundleInventory()
        for name in try listIfPresent(changesPath) {
            let path = changesPath + "/" + name
            guard POSIX.isRegularFile(path) else { continue }
            switch Self.role(ofName: name, fileExtension: Self.logExtension) {
            case .canonical(let device): inventory.changeLogs.append(.init(path: path, device: device, conflictCopy: nil))
            case .conflictCopy(let device, let copy): inventory.changeLogs.append(.init(path: path, device: device, conflictCopy: copy))
            case .ignored: inventory.ignored.append(path)
            }
        }
        for name in try listIfPresent(snapshotsPath) {
            let path = snapshotsPath + "/" + name
            guard POSIX.isRegularFile(path) else { continue }
            switch Self.role(ofName: name, fileExtension: Self.snapshotExtension) {
            case .canonical(let device): inventory.snapshots.append(.init(path: path, device: device, conflictCopy: nil))
            case .conflictCopy(let device, let copy): inventory.snapshots.append(.init(path: path, device: device, conflictCopy: copy))
            case .ignored: inventory.ignored.append(path)
            }
        }
        for name in try listIfPresent(root) where name != Self.metadataName {
            if ConflictCopyName.rootOriginal(of: name) == Self.metadataName, POSIX.isRegularFile(root + "/" + name) {
                inventory.metadataConflictCopies.append(root + "/" + name)
            }
        }
        return inventory
    }

    private func listIfPresent(_ directory: String) throws -> [String] {
        POSIX.isDirectory(directory) ? try POSIX.listDirectory(directory) : []
    }
}

/// The data files found in a bundle by `BundleLayout.inventory()`, sorted by path.
public struct BundleInventory: Sendable, Equatable {
    public struct DeviceFile: Sendable, Equatable {
        public var path: String
        /// The device whose canonical file this is, or is a conflict copy of.
        public var device: DeviceID
        /// Set when this file is a sync tool's conflict copy rather than the canonical file.
        public var conflictCopy: ConflictCopyName?
    }

    public var changeLogs: [DeviceFile] = []
    public var snapshots: [DeviceFile] = []
    public var metadataConflictCopies: [String] = []
    /// Files in `changes/` and `snapshots/` that are neither (temporaries, newer formats).
    public var ignored: [String] = []
}
