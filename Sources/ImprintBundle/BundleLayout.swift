#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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

    /// What a quarantined file's name carries after the original name:
    /// `laptop.log.quarantined-20261123-101010-3fa2c1`. Such a file is never merged as a log,
    /// never taken for a conflict copy and never deleted by tidying; it is reported.
    public static let quarantineMarker = ".quarantined-"

    /// True for a quarantined file's name.
    public static func isQuarantineName(_ name: String) -> Bool {
        name.contains(quarantineMarker)
    }

    /// The time-and-random part of a new quarantine name (UTC, digits and lowercase letters only,
    /// so no conflict-copy pattern can match it).
    static func quarantineStamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let date = "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))-\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))"
        return date + "-" + POSIX.randomSuffix().lowercased()
    }

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

    /// Throws unless metadata.json is here: `.incomplete` when the bundle is still arriving
    /// (metadata.json is an iCloud placeholder or a download in progress, or logs or snapshots
    /// are already here without it), `.notFound` ("not an Imprint bundle") otherwise.
    /// How long after its newest log or snapshot a bundle's metadata.json may still be on its
    /// way (a sync tool copying the folder file by file); past it, a missing metadata.json is damage.
    public static let metadataArrivalWindow: Double = 600

    public func checkMetadataArrived() throws {
        guard !POSIX.exists(metadataPath) else { return }
        let inventory = (try? self.inventory()) ?? BundleInventory()
        if let placeholder = inventory.placeholders.first(where: { $0.value == Self.metadataName }) {
            throw BundleError(.incomplete, "metadata.json is not downloaded to this machine yet (iCloud placeholder \(POSIX.lastComponent(of: placeholder.key))); download the bundle and retry", path: root)
        }
        if inventory.isDownloading(metadataPath) {
            throw BundleError(.incomplete, "metadata.json is still being downloaded by a sync tool; retry when it has arrived", path: root)
        }
        let present = inventory.changeLogs + inventory.snapshots
        if !present.isEmpty {
            // Logs that arrived a while ago without their metadata.json are not a copy in
            // progress but a damaged bundle (exit 2 in the CLI): a sync tool copies a bundle's
            // files within minutes of each other.
            let newest = present.compactMap { POSIX.modificationTime($0.path) }.max() ?? 0
            let age = Double(time(nil)) - newest
            if age > Self.metadataArrivalWindow {
                throw BundleError(.corrupt, "metadata.json is missing although the bundle's \(present.count) change logs or snapshots arrived \(Int(age / 60)) minutes ago: the bundle is damaged; copy metadata.json from another copy of it", path: root)
            }
            throw BundleError(.incomplete, "metadata.json has not arrived yet (\(present.count) change logs or snapshots are here); retry when the sync tool has copied it", path: root)
        }
        throw BundleError(.notFound, "not an Imprint bundle: no metadata.json", path: root)
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
        if AtomicFile.isTemporaryName(name) || SyncToolFileName.classify(name) != nil || isQuarantineName(name) { return .ignored }
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
    /// conflict copy of one, plus conflict copies of metadata.json; and what sync tools left
    /// beside them: downloads in progress and iCloud Drive placeholders of data files.
    public func inventory() throws -> BundleInventory {
        var inventory = BundleInventory()
        for (directory, fileExtension) in [(changesPath, Self.logExtension), (snapshotsPath, Self.snapshotExtension)] {
            for name in try listIfPresent(directory) {
                let path = directory + "/" + name
                if Self.isQuarantineName(name) {
                    inventory.quarantined.append(path)
                    continue
                }
                if let toolFile = SyncToolFileName.classify(name) {
                    inventory.record(toolFile, at: path) { Self.role(ofName: $0, fileExtension: fileExtension) != .ignored }
                    continue
                }
                guard POSIX.isRegularFile(path) else {
                    // A directory, FIFO or link where a device's file belongs: damage, reported.
                    if case .canonical = Self.role(ofName: name, fileExtension: fileExtension) { inventory.wrongType.append(path) }
                    continue
                }
                let entry: BundleInventory.DeviceFile
                switch Self.role(ofName: name, fileExtension: fileExtension) {
                case .canonical(let device): entry = .init(path: path, device: device, conflictCopy: nil)
                case .conflictCopy(let device, let copy): entry = .init(path: path, device: device, conflictCopy: copy)
                case .ignored:
                    inventory.ignored.append(path)
                    continue
                }
                if fileExtension == Self.logExtension { inventory.changeLogs.append(entry) } else { inventory.snapshots.append(entry) }
            }
        }
        for name in try listIfPresent(root) where name != Self.metadataName {
            let path = root + "/" + name
            if let toolFile = SyncToolFileName.classify(name) {
                inventory.record(toolFile, at: path) { $0 == Self.metadataName || ConflictCopyName.rootOriginal(of: $0) == Self.metadataName }
            } else if ConflictCopyName.rootOriginal(of: name) == Self.metadataName, POSIX.isRegularFile(path) {
                inventory.metadataConflictCopies.append(path)
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
    /// Sync-tool downloads in progress of a data file or of metadata.json (their paths): the
    /// file they will become is still on its way.
    public var downloading: [String] = []
    /// Canonical log or snapshot names held by something other than a regular file (a
    /// directory, a FIFO, a symlink): damage, never read or written through.
    public var wrongType: [String] = []
    /// Damaged logs moved aside by a writer (`ChangeLogWriter`): kept for inspection, never
    /// merged, never deleted by tidying.
    public var quarantined: [String] = []
    /// iCloud Drive placeholders of data files or of metadata.json: path of the placeholder →
    /// the file name that is not downloaded to this machine yet.
    public var placeholders: [String: String] = [:]

    /// Files known to be on their way, one line each (for reports and warnings).
    public var arrivalNotes: [String] {
        downloading.map { "\($0) is a sync tool's download in progress" }
            + placeholders.sorted { $0.key < $1.key }.map { "\($0.value) is not downloaded to this machine yet (iCloud placeholder \($0.key)); download it" }
    }

    /// Whether `name` (a data file's or metadata.json's name) has a download in progress here.
    public func isDownloading(_ path: String) -> Bool {
        let name = POSIX.lastComponent(of: path)
        let directory = POSIX.parentDirectory(of: path)
        return downloading.contains { download in
            guard POSIX.parentDirectory(of: download) == directory,
                  case .downloading(let finalName) = SyncToolFileName.classify(POSIX.lastComponent(of: download))
            else { return false }
            return finalName == nil || finalName == name
        }
    }

    mutating func record(_ toolFile: SyncToolFileName, at path: String, isData: (String) -> Bool) {
        switch toolFile {
        case .downloading(let finalName):
            if finalName.map(isData) ?? true { downloading.append(path) }
        case .placeholder(let finalName):
            if isData(finalName) { placeholders[path] = finalName }
        case .bookkeeping:
            break
        }
    }
}
