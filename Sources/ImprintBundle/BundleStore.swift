#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ImprintFiles

/// One `.imprint` bundle as seen by one device: the engine-facing entry point.
///
/// It knows nothing of the CRDT: it stores opaque change records and snapshots, loads the
/// union of everything every device wrote, and tidies sync-tool conflict copies once their
/// content is safe in this device's own log (docs/bundle-format.md, sections 4 and 5).
public final class BundleStore: @unchecked Sendable {
    public let layout: BundleLayout
    public let device: DeviceID
    public let assets: AssetStore

    private let writerLock = NSLock()
    private var cachedWriter: ChangeLogWriter?

    private init(layout: BundleLayout, device: DeviceID) {
        self.layout = layout
        self.device = device
        self.assets = AssetStore(layout: layout)
    }

    /// Creates a new bundle directory with `metadata`. Fails with `.alreadyExists` if a bundle
    /// (a `metadata.json`) is already there.
    public static func create(at path: String, device: DeviceID, metadata: BundleMetadata) throws -> BundleStore {
        let layout = BundleLayout(root: path)
        guard !POSIX.exists(layout.metadataPath) else {
            throw BundleError(.alreadyExists, "a bundle already exists here", path: path)
        }
        try layout.createDirectories()
        let store = BundleStore(layout: layout, device: device)
        try layout.bundleLock.withLock {
            guard !POSIX.exists(layout.metadataPath) else {
                throw BundleError(.alreadyExists, "a bundle already exists here", path: path)
            }
            try metadata.write(to: layout.metadataPath)
        }
        return store
    }

    /// Opens an existing bundle for `device`. Checks that metadata.json is readable by this
    /// version; creates missing subdirectories (a sync tool may not carry empty ones).
    public static func open(at path: String, device: DeviceID) throws -> BundleStore {
        let layout = BundleLayout(root: path)
        guard POSIX.isDirectory(layout.root) else {
            throw BundleError(.notFound, "no bundle directory", path: path)
        }
        _ = try BundleMetadata.read(at: layout.metadataPath)
        try layout.createDirectories()
        return BundleStore(layout: layout, device: device)
    }

    // MARK: Changes

    /// This device's log writer (created on first use).
    public func ownLog() throws -> ChangeLogWriter {
        writerLock.lock()
        defer { writerLock.unlock() }
        if let cachedWriter { return cachedWriter }
        let writer = try ChangeLogWriter(path: layout.changeLogPath(for: device), lock: layout.logLock(for: device))
        cachedWriter = writer
        return writer
    }

    /// Appends changes to this device's log; when this returns they are durable.
    @discardableResult
    public func append(_ changes: [ChangeRecord]) throws -> ChangeLogWriter.AppendResult {
        try ownLog().append(contentsOf: changes)
    }

    // MARK: Loading

    /// Reads metadata (merged with its conflict copies), every snapshot and the union of every
    /// change log and conflict copy. Damaged or unreadable conflict copies and corrupt files are
    /// reported, not fatal; a log or snapshot from a newer format version is fatal
    /// (`.unsupportedVersion`), since ignoring it would hide changes.
    public func load() throws -> BundleContents {
        let inventory = try layout.inventory()
        var metadata = try BundleMetadata.read(at: layout.metadataPath)
        for copy in inventory.metadataConflictCopies {
            if let other = try? BundleMetadata.read(at: copy), other.documentID == metadata.documentID {
                metadata = metadata.merged(with: other)
            }
        }

        var snapshots: [BundleContents.LoadedSnapshot] = []
        var snapshotReports: [BundleContents.FileReport] = []
        for entry in inventory.snapshots {
            var report = BundleContents.FileReport(path: entry.path, device: entry.device,
                                                   isConflictCopy: entry.conflictCopy != nil,
                                                   records: 0, droppedBytes: 0, error: nil)
            do {
                let file = try SnapshotFile.read(at: entry.path)
                snapshots.append(.init(path: entry.path, device: entry.device, isConflictCopy: entry.conflictCopy != nil, file: file))
                report.records = file.coveredChanges.count
            } catch let error as BundleError where error.code != .unsupportedVersion && error.code != .io {
                report.error = error
            }
            snapshotReports.append(report)
        }

        var seen = Set<ChangeHash>()
        var changes: [ChangeRecord] = []
        var logReports: [BundleContents.FileReport] = []
        let ordered = inventory.changeLogs.filter { $0.conflictCopy == nil } + inventory.changeLogs.filter { $0.conflictCopy != nil }
        for entry in ordered {
            var report = BundleContents.FileReport(path: entry.path, device: entry.device,
                                                   isConflictCopy: entry.conflictCopy != nil,
                                                   records: 0, droppedBytes: 0, error: nil)
            do {
                let contents = try ChangeLogReader.read(at: entry.path)
                report.records = contents.records.count
                report.droppedBytes = contents.droppedBytes
                for record in contents.records where seen.insert(record.hash).inserted {
                    changes.append(record)
                }
            } catch let error as BundleError where error.code == .corrupt {
                report.error = error
            }
            logReports.append(report)
        }
        return BundleContents(metadata: metadata, snapshots: snapshots, changes: changes,
                              logReports: logReports, snapshotReports: snapshotReports)
    }

    // MARK: Metadata

    /// Rewrites metadata.json under the bundle lock. The closure sees the current file merged
    /// with any conflict copies, with `modified` already set to now; those copies are deleted
    /// after the merged file is durable.
    @discardableResult
    public func updateMetadata(_ change: (inout BundleMetadata) throws -> Void) throws -> BundleMetadata {
        try layout.bundleLock.withLock {
            var metadata = try BundleMetadata.read(at: layout.metadataPath)
            let copies = try layout.inventory().metadataConflictCopies
            var merged: [String] = []
            for copy in copies {
                if let other = try? BundleMetadata.read(at: copy), other.documentID == metadata.documentID {
                    metadata = metadata.merged(with: other)
                    merged.append(copy)
                }
            }
            // `modified` moves forward by default (the merge of conflict copies relies on it);
            // `change` may set it explicitly.
            metadata.modified = max(metadata.modified, BundleMetadata.wholeSeconds(Date()))
            try change(&metadata)
            try metadata.write(to: layout.metadataPath)
            for copy in merged { try POSIX.unlink(copy) }
            if !merged.isEmpty { try POSIX.fsyncDirectory(layout.root) }
            return metadata
        }
    }

    // MARK: Snapshots and compaction

    /// Writes this device's snapshot, then drops from this device's own log every record the
    /// snapshot covers (the compaction rule: snapshot durable first, own log only). Other
    /// devices' files are never touched. Returns the number of log records removed.
    @discardableResult
    public func writeSnapshot(_ snapshot: SnapshotFile) throws -> Int {
        let writer = try ownLog()
        try POSIX.makeDirectories(layout.snapshotsPath)
        try writer.lock.withLock {
            try snapshot.write(to: layout.snapshotPath(for: device))
        }
        let covered = Set(snapshot.coveredChanges)
        return try writer.rewrite { !covered.contains($0.hash) }
    }

    // MARK: Tidying conflict copies

    /// What `tidyConflictCopies` did.
    public struct TidyReport: Sendable, Equatable {
        /// Changes copied from conflict copies into this device's log.
        public var changesAbsorbed = 0
        /// Conflict-copy files deleted.
        public var removed: [String] = []
        /// Conflict copies kept because their content is not (yet) safe in this device's
        /// files, with the reason.
        public var kept: [String: String] = [:]
    }

    /// Makes conflict copies redundant and deletes them: each change-log copy's records are
    /// appended (those not already there) to this device's own log and fsync'd, then the copy
    /// is deleted. A snapshot copy is deleted only when every change it covers is in this
    /// device's own log or own snapshot (the engine makes that true by writing a snapshot after
    /// merging). Metadata copies are merged into metadata.json first. Holds the bundle lock.
    @discardableResult
    public func tidyConflictCopies() throws -> TidyReport {
        try layout.bundleLock.withLock {
            var report = TidyReport()
            let inventory = try layout.inventory()
            let writer = try ownLog()
            var durable = Set(try writer.readAll().records.map(\.hash))
            if let own = try? SnapshotFile.read(at: layout.snapshotPath(for: device)) {
                durable.formUnion(own.coveredChanges)
            }
            for entry in inventory.changeLogs where entry.conflictCopy != nil {
                let contents: ChangeLogContents
                do {
                    contents = try ChangeLogReader.read(at: entry.path)
                } catch let error as BundleError {
                    report.kept[entry.path] = "unreadable: \(error)"
                    continue
                } catch let error as FileError {
                    report.kept[entry.path] = "unreadable: \(BundleError(error))"
                    continue
                }
                var missing: [ChangeRecord] = []
                for record in contents.records where !durable.contains(record.hash) {
                    missing.append(record)
                    durable.insert(record.hash)
                }
                if !missing.isEmpty { try writer.append(contentsOf: missing) }
                report.changesAbsorbed += missing.count
                try POSIX.unlink(entry.path)
                report.removed.append(entry.path)
            }
            for entry in inventory.snapshots where entry.conflictCopy != nil {
                guard let file = try? SnapshotFile.read(at: entry.path) else {
                    report.kept[entry.path] = "unreadable snapshot"
                    continue
                }
                let uncovered = file.coveredChanges.filter { !durable.contains($0) }.count
                if uncovered > 0 {
                    report.kept[entry.path] = "\(uncovered) covered changes not yet in this device's log or snapshot"
                    continue
                }
                try POSIX.unlink(entry.path)
                report.removed.append(entry.path)
            }
            if !inventory.metadataConflictCopies.isEmpty {
                var metadata = try BundleMetadata.read(at: layout.metadataPath)
                var merged: [String] = []
                for copy in inventory.metadataConflictCopies {
                    guard let other = try? BundleMetadata.read(at: copy), other.documentID == metadata.documentID else {
                        report.kept[copy] = "unreadable or another document's metadata"
                        continue
                    }
                    metadata = metadata.merged(with: other)
                    merged.append(copy)
                }
                if !merged.isEmpty {
                    try metadata.write(to: layout.metadataPath)
                    for copy in merged { try POSIX.unlink(copy) }
                    report.removed += merged
                }
            }
            if !report.removed.isEmpty {
                for directory in [layout.root, layout.changesPath, layout.snapshotsPath] where POSIX.isDirectory(directory) {
                    try POSIX.fsyncDirectory(directory)
                }
            }
            report.removed.sort()
            return report
        }
    }

    // MARK: Assets

    /// Deletes assets the caller determined the merged document no longer references, under
    /// the bundle lock (so two tidying processes do not race). Returns the ids removed.
    @discardableResult
    public func removeUnreferencedAssets(_ ids: [AssetID]) throws -> [AssetID] {
        try layout.bundleLock.withLock {
            try ids.filter { try assets.remove($0) }
        }
    }

    // MARK: Housekeeping

    /// Deletes temporaries of interrupted atomic writes (section 8 of the spec) anywhere in the
    /// bundle that are older than `age`, so a crashed writer's leftovers do not accumulate or
    /// get synced. Younger ones may belong to a live writer and are left alone.
    @discardableResult
    public func removeStaleTemporaries(olderThan age: Duration = .seconds(3600)) throws -> Int {
        var removed = 0
        for directory in [layout.root, layout.changesPath, layout.snapshotsPath, layout.assetsPath] {
            removed += try AtomicFile.removeStaleTemporaries(in: directory, olderThan: age)
        }
        return removed
    }

    // MARK: Bundle-level conflict copies

    /// Sibling directories that are sync-tool copies of this bundle (`paper 2.imprint`,
    /// `paper (conflicted copy …).imprint`, …) holding the same document id.
    public func duplicateBundles() throws -> [String] {
        let parent = POSIX.parentDirectory(of: layout.root)
        let name = POSIX.lastComponent(of: layout.root)
        let documentID = try BundleMetadata.read(at: layout.metadataPath).documentID
        // Every conflict-copy style keeps the original's stem as a prefix; checking that first
        // avoids parsing every name of a large folder (the parse uses regular expressions).
        let stem = name.hasSuffix(".imprint") ? String(name.dropLast(".imprint".count)) : name
        var result: [String] = []
        for sibling in try POSIX.listDirectory(parent) where sibling != name && sibling.hasPrefix(stem) {
            guard ConflictCopyName.rootOriginal(of: sibling) == name else { continue }
            let path = parent + "/" + sibling
            guard POSIX.isDirectory(path),
                  let other = try? BundleMetadata.read(at: BundleLayout(root: path).metadataPath),
                  other.documentID == documentID else { continue }
            result.append(path)
        }
        return result
    }

    /// Folds a duplicate bundle into this one: its changes into this device's log, its assets
    /// into `assets/` (streamed), its metadata merged. The duplicate directory is deleted only
    /// if every change its snapshots cover is then in this device's log or snapshot; otherwise
    /// it is kept (load it with `BundleStore.open(at:device:).load()`, merge in the engine,
    /// `writeSnapshot`, and call this again).
    @discardableResult
    public func absorbDuplicateBundle(at path: String) throws -> TidyReport {
        let other = BundleStore(layout: BundleLayout(root: path), device: device)
        let contents = try other.load()
        guard contents.metadata.documentID == (try BundleMetadata.read(at: layout.metadataPath)).documentID else {
            throw BundleError(.invalidArgument, "not a copy of this document (different documentId)", path: path)
        }
        return try layout.bundleLock.withLock {
            var report = TidyReport()
            let writer = try ownLog()
            var durable = Set(try writer.readAll().records.map(\.hash))
            if let own = try? SnapshotFile.read(at: layout.snapshotPath(for: device)) {
                durable.formUnion(own.coveredChanges)
            }
            let missing = contents.changes.filter { durable.insert($0.hash).inserted }
            if !missing.isEmpty { try writer.append(contentsOf: missing) }
            report.changesAbsorbed = missing.count
            for asset in try other.assets.list() where !assets.contains(asset.id) {
                let fd = try POSIX.open(other.assets.path(of: asset.id), O_RDONLY)
                defer { POSIX.close(fd) }
                let added = try assets.add(readingFrom: fd, sourceName: other.assets.path(of: asset.id))
                if added != asset.id {
                    report.kept[path] = "asset \(asset.id) does not match its hash"
                    try assets.remove(added)
                }
            }
            var metadata = try BundleMetadata.read(at: layout.metadataPath)
            let merged = metadata.merged(with: contents.metadata)
            if merged != metadata {
                metadata = merged
                try metadata.write(to: layout.metadataPath)
            }
            let uncovered = contents.snapshots.flatMap(\.file.coveredChanges).filter { !durable.contains($0) }.count
            if uncovered > 0 {
                report.kept[path] = "\(uncovered) changes covered by its snapshots are not yet in this device's log or snapshot"
            } else if report.kept[path] == nil && !contents.hasDamage {
                try POSIX.removeTree(path)
                try POSIX.fsyncDirectory(POSIX.parentDirectory(of: path))
                report.removed.append(path)
            } else if report.kept[path] == nil {
                report.kept[path] = "it has damaged files; kept for inspection"
            }
            return report
        }
    }
}
