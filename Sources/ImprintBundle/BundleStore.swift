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
    ///
    /// A folder without metadata.json is `.notFound` ("not an Imprint bundle") when it holds no
    /// bundle data either, and `.incomplete` when change logs or snapshots are there, or
    /// metadata.json is an iCloud Drive placeholder or a download in progress: the bundle is
    /// still arriving, and opening it again later succeeds.
    public static func open(at path: String, device: DeviceID) throws -> BundleStore {
        let layout = BundleLayout(root: path)
        guard POSIX.isDirectory(layout.root) else {
            throw BundleError(.notFound, "no bundle directory", path: path)
        }
        try layout.checkMetadataArrived()
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
    public func append(_ changes: [LogRecord]) throws -> ChangeLogWriter.AppendResult {
        try ownLog().append(contentsOf: changes)
    }

    // MARK: Loading

    /// Reads metadata (merged with its conflict copies), every snapshot and the union of every
    /// change log and conflict copy. Damaged or unreadable conflict copies and corrupt files are
    /// reported, not fatal; a log or snapshot from a newer format version is fatal
    /// (`.unsupportedVersion`), since ignoring it would hide changes. Files still on their way
    /// (sync-tool downloads, iCloud placeholders) are listed in `arrivalNotes`.
    public func load() throws -> BundleContents {
        let inventory = try layout.inventory()
        var metadata = try BundleMetadata.read(at: layout.metadataPath)
        for copy in inventory.metadataConflictCopies {
            if let other = try? BundleMetadata.read(at: copy), other.documentID == metadata.documentID {
                metadata = metadata.merged(with: other)
            }
        }
        return try Self.loadFiles(of: inventory, metadata: metadata)
    }

    /// Reads another copy of a bundle without changing a byte of it (no directories created,
    /// no locks taken): a duplicate bundle (`paper 2.imprint`) still arriving, or an unpacked
    /// archive. A copy without metadata.json loads with `metadataMissing` set and `metadata`
    /// taken from `fallback`; a copy whose metadata.json names another document throws
    /// `.invalidArgument`.
    public static func loadCopy(at path: String, fallback: BundleMetadata) throws -> BundleContents {
        let layout = BundleLayout(root: path)
        guard POSIX.isDirectory(layout.root) else {
            throw BundleError(.notFound, "no bundle directory", path: path)
        }
        let inventory = try layout.inventory()
        var contents: BundleContents
        if POSIX.exists(layout.metadataPath) {
            var metadata = try BundleMetadata.read(at: layout.metadataPath)
            guard metadata.documentID == fallback.documentID else {
                throw BundleError(.invalidArgument, "not a copy of this document (documentId \(metadata.documentID), not \(fallback.documentID))", path: path)
            }
            for copy in inventory.metadataConflictCopies {
                if let other = try? BundleMetadata.read(at: copy), other.documentID == metadata.documentID {
                    metadata = metadata.merged(with: other)
                }
            }
            contents = try loadFiles(of: inventory, metadata: metadata)
        } else {
            contents = try loadFiles(of: inventory, metadata: fallback)
            contents.metadataMissing = true
        }
        return contents
    }

    private static func loadFiles(of inventory: BundleInventory, metadata: BundleMetadata) throws -> BundleContents {
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
            } catch let error as BundleError where error.isVanished {
                continue // removed by another process's tidying since the listing: nothing to read
            } catch let error as BundleError where error.code != .unsupportedVersion && error.code != .io {
                report.error = error
            }
            snapshotReports.append(report)
        }

        var sources: [RecordHash: String] = [:]
        var changes: [LogRecord] = []
        var logReports: [BundleContents.FileReport] = []
        let ordered = inventory.changeLogs.filter { $0.conflictCopy == nil } + inventory.changeLogs.filter { $0.conflictCopy != nil }
        for entry in ordered {
            var report = BundleContents.FileReport(path: entry.path, device: entry.device,
                                                   isConflictCopy: entry.conflictCopy != nil,
                                                   records: 0, droppedBytes: 0, error: nil)
            do {
                let contents = try BundleError.convertingFileErrors { try ChangeLogReader.read(at: entry.path) }
                report.records = contents.records.count
                report.droppedBytes = contents.droppedBytes
                report.damage = contents.damage
                for record in contents.records where sources[record.hash] == nil {
                    sources[record.hash] = entry.path
                    changes.append(record)
                }
            } catch let error as BundleError where error.isVanished {
                continue // removed by another process's tidying since the listing: nothing to read
            } catch let error as BundleError where error.code == .corrupt {
                report.error = error
            }
            logReports.append(report)
        }
        for path in inventory.wrongType {
            let name = POSIX.lastComponent(of: path)
            let isLog = name.hasSuffix("." + BundleLayout.logExtension)
            let device = (try? DeviceID(String(name.prefix { $0 != "." }))) ?? (try! DeviceID("unknown"))
            let report = BundleContents.FileReport(
                path: path, device: device, isConflictCopy: false, records: 0, droppedBytes: 0,
                error: BundleError(.corrupt, "\(POSIX.fileTypeName(path)) where a \(isLog ? "change log" : "snapshot") file belongs", path: path))
            if isLog { logReports.append(report) } else { snapshotReports.append(report) }
        }
        var contents = BundleContents(metadata: metadata, snapshots: snapshots, changes: changes,
                                      logReports: logReports, snapshotReports: snapshotReports)
        contents.arrivalNotes = inventory.arrivalNotes
        contents.quarantined = inventory.quarantined
        contents.sources = sources
        for snapshot in snapshots {
            for hash in snapshot.file.coveredChanges where contents.sources[hash] == nil {
                contents.sources[hash] = snapshot.path
            }
        }
        return contents
    }

    /// The changes this device's own files make durable: its log's records and the changes
    /// its snapshot covers. A change in this set survives the loss of every other file.
    public func ownDurableHashes() throws -> Set<RecordHash> {
        var durable = Set(try ownLog().readAll().records.map(\.hash))
        if let own = try? SnapshotFile.read(at: layout.snapshotPath(for: device)) {
            durable.formUnion(own.coveredChanges)
        }
        return durable
    }

    // MARK: Metadata

    /// Rewrites metadata.json under the bundle lock. The closure sees the current file merged
    /// with any conflict copies, with `modified` already set to now; those copies are deleted
    /// after the merged file is durable (only those quiet for `settle`; younger ones may still
    /// be arriving: they are merged but left for `tidyConflictCopies`).
    @discardableResult
    public func updateMetadata(settle: SettlePolicy = .sync, _ change: (inout BundleMetadata) throws -> Void) throws -> BundleMetadata {
        try layout.bundleLock.withLock {
            var metadata = try BundleMetadata.read(at: layout.metadataPath)
            let copies = try layout.inventory().metadataConflictCopies
            var merged: [String] = []
            for copy in copies {
                if let other = try? BundleMetadata.read(at: copy), other.documentID == metadata.documentID {
                    metadata = metadata.merged(with: other)
                    if Self.quietReason(copy, settle: settle) == nil { merged.append(copy) }
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

    /// What `tidyConflictCopies` and `absorbDuplicateBundle` did.
    public struct TidyReport: Sendable, Equatable {
        /// Changes copied from conflict copies into this device's log.
        public var changesAbsorbed = 0
        /// Conflict-copy files (and duplicate bundles) deleted.
        public var removed: [String] = []
        /// Conflict copies kept because their content is not (yet) safe in this device's
        /// files, or they may still be arriving, with the reason.
        public var kept: [String: String] = [:]
    }

    /// Makes conflict copies redundant and deletes those that are: each change-log copy's
    /// readable records are appended (those not already there) to this device's own log and
    /// fsync'd; metadata copies are merged into metadata.json.
    ///
    /// A copy is deleted only when **every byte of it** is then in this device's own durable
    /// files and it has finished arriving:
    /// - a log copy read to a clean end (no torn tail, no damaged or unknown frame);
    /// - a snapshot copy that reads, whose covered changes are all in this device's log or
    ///   snapshot (the engine makes that true by writing a snapshot after merging);
    /// - no sync-tool download of the same name in progress;
    /// - nothing touched it for `settle.quietPeriod`, and it did not change while it was read.
    /// Everything else is kept, merged as far as it reads, and listed in `kept` with the
    /// reason; the next call tries again. Holds the bundle lock.
    @discardableResult
    public func tidyConflictCopies(settle: SettlePolicy = .sync) throws -> TidyReport {
        try layout.bundleLock.withLock {
            var report = TidyReport()
            let inventory = try layout.inventory()
            let writer = try ownLog()
            var durable = try ownDurableHashes()
            for entry in inventory.changeLogs where entry.conflictCopy != nil {
                let before = FileStamp.take(entry.path)
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
                var missing: [LogRecord] = []
                for record in contents.records where !durable.contains(record.hash) {
                    missing.append(record)
                    durable.insert(record.hash)
                }
                if !missing.isEmpty { try writer.append(contentsOf: missing) }
                report.changesAbsorbed += missing.count
                if let reason = Self.incompleteReason(contents) ?? Self.arrivalReason(entry.path, stampBeforeRead: before, inventory: inventory, settle: settle) {
                    report.kept[entry.path] = reason
                    continue
                }
                try POSIX.unlink(entry.path)
                report.removed.append(entry.path)
            }
            for entry in inventory.snapshots where entry.conflictCopy != nil {
                let before = FileStamp.take(entry.path)
                guard let file = try? SnapshotFile.read(at: entry.path) else {
                    report.kept[entry.path] = "unreadable snapshot (damaged, or still arriving)"
                    continue
                }
                let uncovered = file.coveredChanges.filter { !durable.contains($0) }.count
                if uncovered > 0 {
                    report.kept[entry.path] = "\(uncovered) covered changes not yet in this device's log or snapshot"
                    continue
                }
                if let reason = Self.arrivalReason(entry.path, stampBeforeRead: before, inventory: inventory, settle: settle) {
                    report.kept[entry.path] = reason
                    continue
                }
                try POSIX.unlink(entry.path)
                report.removed.append(entry.path)
            }
            if !inventory.metadataConflictCopies.isEmpty {
                var metadata = try BundleMetadata.read(at: layout.metadataPath)
                var merged: [String] = []
                var settled: [String] = []
                for copy in inventory.metadataConflictCopies {
                    let before = FileStamp.take(copy)
                    guard let other = try? BundleMetadata.read(at: copy), other.documentID == metadata.documentID else {
                        report.kept[copy] = "unreadable or another document's metadata"
                        continue
                    }
                    metadata = metadata.merged(with: other)
                    merged.append(copy)
                    if let reason = Self.arrivalReason(copy, stampBeforeRead: before, inventory: inventory, settle: settle) {
                        report.kept[copy] = reason
                    } else {
                        settled.append(copy)
                    }
                }
                if !merged.isEmpty {
                    try metadata.write(to: layout.metadataPath)
                    for copy in settled { try POSIX.unlink(copy) }
                    report.removed += settled
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

    /// Why a log copy that read without error still holds bytes that were not merged, or nil.
    static func incompleteReason(_ contents: ChangeLogContents) -> String? {
        if let first = contents.damage.first {
            return "\(contents.damage.count) damaged stretch(es) from byte \(first.range.lowerBound): \(contents.damage.byteCount) bytes not merged (the frames after them were)"
        }
        if contents.skippedFrames > 0 {
            return "\(contents.skippedFrames) frames of a newer format that this version cannot merge"
        }
        switch contents.tail {
        case .clean:
            return nil
        case .truncatedHeader, .truncatedFrame:
            return "torn tail: \(contents.droppedBytes) bytes after the last whole frame (still arriving, or cut short)"
        case .checksumMismatch:
            return "damaged frame at byte \(contents.validLength): \(contents.droppedBytes) bytes not merged"
        case .payloadTooLarge(let length):
            return "damaged frame at byte \(contents.validLength) (length \(length)): \(contents.droppedBytes) bytes not merged"
        case .malformedPayload:
            return "undecodable frame at byte \(contents.validLength): \(contents.droppedBytes) bytes not merged"
        }
    }

    /// Why a copy whose bytes are all merged must still wait, or nil when it may go: a
    /// download of the same name in progress, a change while it was read, or too little quiet.
    static func arrivalReason(_ path: String, stampBeforeRead before: FileStamp?, inventory: BundleInventory,
                              settle: SettlePolicy) -> String? {
        if inventory.isDownloading(path) { return "a sync tool is still downloading it" }
        return quietReason(path, settle: settle, stampBeforeRead: before)
    }

    /// Why `path` does not count as settled, or nil.
    static func quietReason(_ path: String, settle: SettlePolicy, stampBeforeRead before: FileStamp? = nil) -> String? {
        guard let after = FileStamp.take(path) else { return "it disappeared while it was read" }
        if let before, before != after { return "it changed while it was read (still arriving)" }
        if !after.isQuiet(for: settle.quietPeriod) {
            return "written less than \(settle.quietPeriod) ago (may still be arriving)"
        }
        return nil
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
    /// `paper (conflicted copy …).imprint`, …): those whose metadata.json holds the same
    /// document id, and those that have no metadata.json (yet, or any more) but hold change
    /// logs or snapshots, such as a copy still arriving or a copy a sync tool kept writing into
    /// after it was tidied. Whether such a copy's changes belong to this document is for the
    /// engine to decide (`ImprintStore` checks that they descend from this document's history).
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
            guard POSIX.isDirectory(path) else { continue }
            let copy = BundleLayout(root: path)
            if POSIX.exists(copy.metadataPath) {
                guard let other = try? BundleMetadata.read(at: copy.metadataPath), other.documentID == documentID else { continue }
                result.append(path)
            } else if let inventory = try? copy.inventory(),
                      !inventory.changeLogs.isEmpty || !inventory.snapshots.isEmpty {
                result.append(path)
            }
        }
        return result
    }

    /// Folds a duplicate bundle into this one: its changes into this device's log, its assets
    /// into `assets/` (streamed), its metadata merged. The duplicate directory is deleted only
    /// when every byte of it is then safe in this bundle and it has finished arriving:
    /// - every change of its logs is in this device's log, and every change its snapshots
    ///   cover is in this device's log or snapshot (otherwise load it with
    ///   `BundleStore.loadCopy(at:fallback:)`, merge in the engine, `writeSnapshot`, and call
    ///   this again);
    /// - it has its metadata.json, no damaged or torn file, no sync-tool download or iCloud
    ///   placeholder, no file this version does not know;
    /// - nothing in it was touched for `settle.quietPeriod` nor while it was read.
    /// The copy is never modified (no directory or lock is created in it).
    ///
    /// A copy without metadata.json carries nothing that says which document it belongs to;
    /// this layer cannot tell, so it refuses one (`.invalidArgument`) unless the caller has
    /// checked its changes (`verifiedWithoutMetadata`, as `ImprintStore` does by their
    /// ancestry).
    @discardableResult
    public func absorbDuplicateBundle(at path: String, settle: SettlePolicy = .sync,
                                      verifiedWithoutMetadata: Bool = false) throws -> TidyReport {
        let treeBefore = TreeStamp.take(path)
        let ownMetadata = try BundleMetadata.read(at: layout.metadataPath)
        let contents = try Self.loadCopy(at: path, fallback: ownMetadata)
        if contents.metadataMissing && !verifiedWithoutMetadata {
            throw BundleError(.invalidArgument, "a copy without metadata.json: its changes must be checked against this document first", path: path)
        }
        let otherAssets = AssetStore(layout: BundleLayout(root: path))
        return try layout.bundleLock.withLock {
            var report = TidyReport()
            // Another process may have absorbed and removed it since it was read.
            guard POSIX.isDirectory(path) else { return report }
            let writer = try ownLog()
            var durable = try ownDurableHashes()
            let missing = contents.changes.filter { durable.insert($0.hash).inserted }
            if !missing.isEmpty { try writer.append(contentsOf: missing) }
            report.changesAbsorbed = missing.count
            var reasons: [String] = []
            for asset in (try? otherAssets.list()) ?? [] where !assets.contains(asset.id) {
                let source = otherAssets.path(of: asset.id)
                let fd = try POSIX.open(source, O_RDONLY)
                defer { POSIX.close(fd) }
                let added = try assets.add(readingFrom: fd, sourceName: source)
                if added != asset.id {
                    reasons.append("asset \(asset.id) does not match its hash (damaged, or still arriving)")
                    try assets.remove(added)
                }
            }
            if !contents.metadataMissing {
                var metadata = try BundleMetadata.read(at: layout.metadataPath)
                let merged = metadata.merged(with: contents.metadata)
                if merged != metadata {
                    metadata = merged
                    try metadata.write(to: layout.metadataPath)
                }
            }
            let uncovered = contents.snapshots.flatMap(\.file.coveredChanges).filter { !durable.contains($0) }.count
            if uncovered > 0 {
                reasons.append("\(uncovered) changes covered by its snapshots are not yet in this device's log or snapshot")
            }
            reasons += Self.keepReasons(forCopy: path, contents: contents, treeBefore: treeBefore, settle: settle)
            if reasons.isEmpty {
                try POSIX.removeTree(path)
                try POSIX.fsyncDirectory(POSIX.parentDirectory(of: path))
                report.removed.append(path)
            } else {
                report.kept[path] = reasons.joined(separator: "; ")
            }
            return report
        }
    }

    /// Why a duplicate bundle whose changes were all absorbed must still be kept.
    static func keepReasons(forCopy path: String, contents: BundleContents, treeBefore: TreeStamp,
                            settle: SettlePolicy) -> [String] {
        var reasons: [String] = []
        for report in contents.logReports + contents.snapshotReports {
            let name = report.path.hasPrefix(path + "/") ? String(report.path.dropFirst(path.count + 1)) : report.path
            if let error = report.error {
                reasons.append("\(name) is damaged or still arriving (\(error.message))")
            } else if report.droppedBytes > 0 {
                reasons.append("\(name) has \(report.droppedBytes) bytes after its last whole frame (torn or still arriving)")
            }
        }
        reasons += contents.arrivalNotes
        let inventory = (try? BundleLayout(root: path).inventory()) ?? BundleInventory()
        if !inventory.ignored.isEmpty {
            reasons.append("it holds files this version does not merge: \(inventory.ignored.map(POSIX.lastComponent(of:)).joined(separator: ", "))")
        }
        let treeAfter = TreeStamp.take(path)
        if treeAfter != treeBefore {
            reasons.append("it changed while it was merged (still arriving)")
        } else if !treeAfter.isQuiet(for: settle.quietPeriod) {
            reasons.append("written less than \(settle.quietPeriod) ago (may still be arriving)")
        }
        return reasons
    }
}
