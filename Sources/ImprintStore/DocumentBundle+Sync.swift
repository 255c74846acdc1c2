import Foundation
import ImprintBundle
import ImprintCRDT

extension DocumentBundle {
    /// Re-reads the bundle and merges whatever arrived since the last load (other devices'
    /// logs and snapshots, conflict copies). Returns how many changes the document gained.
    @discardableResult
    public func reload() throws(StoreError) -> Int {
        let before = document.currentHeads
        try readNewContents()
        return document.changes(since: before).count
    }

    /// Loads the bundle again and applies what is new, without counting it.
    func readNewContents() throws(StoreError) {
        let contents = try StoreError.wrapping { try store.load() }
        var ingest = Ingest()
        try ingest.update(document, from: contents, skipping: loadedHashes)
        warnings = ingest.warnings
        damage = ingest.damage
        metadata = contents.metadata
        loadedHashes.formUnion(contents.knownHashes)
        for (hash, source) in contents.sources where changeSources[hash] == nil {
            changeSources[hash] = source
        }
        devices.formUnion((contents.logReports + contents.snapshotReports).map(\.device))
        ownLogRecords = contents.logReports.first { $0.device == device && !$0.isConflictCopy }?.records ?? 0
        if let newBody = try? DocumentSchema.body(of: document) { body = newBody }
    }

    /// Writes this device's snapshot covering every change the document holds, then compacts
    /// this device's log (bundle-format.md, section 4). Returns the log records removed.
    @discardableResult
    public func writeSnapshot() throws(StoreError) -> Int {
        // Every change the save holds, redacted ones included (a redacted document's save
        // is its only copy of them: they are in no log).
        let covered = try StoreError.wrapping {
            try document.changeHashes.map { try ImprintBundle.RecordHash(bytes: $0.bytes) }
        }
        let file = SnapshotFile(coveredChanges: covered, snapshot: document.save())
        let removed = try StoreError.wrapping { try store.writeSnapshot(file) }
        loadedHashes.formUnion(covered)
        return removed
    }

    /// Merges every device log, every file-level conflict copy and every duplicate bundle
    /// (`paper 2.imprint`, …) now; writes a snapshot of the result, so every merged change is
    /// durable in this device's own files; only then deletes the copies that are wholly
    /// merged and have finished arriving (`settle`; see `BundleStore.tidyConflictCopies` and
    /// `absorbDuplicateBundle`). Copies that are torn, damaged, still changing, not quiet for
    /// `settle.quietPeriod`, or hold another document's history are kept and listed in the
    /// report with the reason; the next sync tries again.
    ///
    /// `compact` writes the snapshot (and compacts this device's log) even when nothing was
    /// merged; so does a log of `compactionThreshold` records or more.
    ///
    /// ```swift
    /// let doc = try DocumentBundle.open(at: "paper.imprint", device: DeviceID("laptop"))
    /// let report = try doc.sync()
    /// print("merged \(report.changesMerged) changes, removed \(report.removed.count) copies")
    /// for (path, why) in report.kept { print("kept \(path): \(why)") }
    /// ```
    @discardableResult
    public func sync(compact: Bool = false, settle: SettlePolicy = .sync) throws(StoreError) -> SyncReport {
        var report = SyncReport()
        let ownDurable = try StoreError.wrapping { try store.ownDurableHashes() }
        try readNewContents()
        var duplicates: [String] = []
        for copy in try readDuplicates() {
            if let reason = copy.refusal {
                report.kept[copy.path] = reason
            } else {
                duplicates.append(copy.path)
            }
        }
        // Every change of the document that this device's own files do not hold yet is new
        // to this device, wherever it came from (another device's log, a conflict copy, a
        // duplicate bundle); the ones no file of this bundle holds go to this device's log.
        var merged: [Change] = []
        for change in document.allChanges() {
            guard let hash = try? ImprintBundle.RecordHash(bytes: change.hash.bytes), !ownDurable.contains(hash) else { continue }
            merged.append(change)
            report.mergedFrom[changeSources[hash] ?? "this session's edits", default: 0] += 1
        }
        report.changesMerged = merged.count
        let countBefore = loadedHashes.count
        try persist(merged)
        report.changesPersisted = loadedHashes.count - countBefore
        let inventory = try StoreError.wrapping { try store.layout.inventory() }
        let hasCopies = inventory.changeLogs.contains { $0.conflictCopy != nil }
            || inventory.snapshots.contains { $0.conflictCopy != nil }
            || !duplicates.isEmpty
        if compact || hasCopies || report.changesMerged > 0 || ownLogRecords >= Self.compactionThreshold {
            try writeSnapshot()
            report.snapshotWritten = true
        }
        let tidy = try StoreError.wrapping { try store.tidyConflictCopies(settle: settle) }
        report.removed += tidy.removed
        report.kept.merge(tidy.kept) { a, _ in a }
        for path in duplicates {
            let absorbed: BundleStore.TidyReport
            do {
                absorbed = try store.absorbDuplicateBundle(at: path, settle: settle, verifiedWithoutMetadata: true)
            } catch {
                let bundleError = (error as? BundleError) ?? (error as? FileError).map(BundleError.init)
                if let bundleError, bundleError.isVanished || bundleError.code == .notFound {
                    continue // another process absorbed and removed it meanwhile
                }
                if let bundleError, bundleError.path.map({ $0 == path || $0.hasPrefix(path + "/") }) ?? false {
                    // The copy changed since it was read (a file still arriving): keep it, retry later.
                    report.kept[path] = "not merged yet: \(bundleError)"
                    continue
                }
                throw StoreError.wrap(error)
            }
            report.removed += absorbed.removed
            report.kept.merge(absorbed.kept) { a, _ in a }
        }
        report.incomplete = inventory.arrivalNotes
        report.quarantined = try StoreError.wrapping { try store.layout.inventory().quarantined }
        metadata = try StoreError.wrapping { try BundleMetadata.read(at: store.layout.metadataPath) }
        return report
    }

    /// A duplicate bundle as read by `readDuplicates()`.
    struct DuplicateCopy {
        var path: String
        /// Why it was not merged (another document's history, unreadable), or nil.
        var refusal: String?
    }

    /// Reads every duplicate bundle (`paper 2.imprint`, and copies still arriving without
    /// their metadata.json) into the document without changing a byte on disk: the
    /// document then shows what the copies hold, and `sync()` makes it durable and tidies.
    func readDuplicates() throws(StoreError) -> [DuplicateCopy] {
        let paths = try StoreError.wrapping { try store.duplicateBundles() }
        var copies: [DuplicateCopy] = []
        for path in paths {
            var copy = DuplicateCopy(path: path)
            do {
                let contents = try BundleStore.loadCopy(at: path, fallback: metadata)
                let known = loadedHashes.union(duplicateHashes)
                if contents.metadataMissing, let reason = Ingest.foreignHistoryReason(of: contents, known: known) {
                    copy.refusal = "not merged: \(reason)"
                    warnings.append("kept \(path): \(reason)")
                } else {
                    var ingest = Ingest()
                    try ingest.update(document, from: contents, skipping: known, asCopy: true)
                    warnings += ingest.warnings
                    let fresh = contents.knownHashes.subtracting(loadedHashes)
                    duplicateHashes.formUnion(fresh)
                    for (hash, source) in contents.sources where changeSources[hash] == nil {
                        changeSources[hash] = source
                    }
                    if !fresh.isEmpty {
                        warnings.append("duplicate bundle \(path) holds \(fresh.count) changes not yet in this bundle's files; `imprint sync` folds it in")
                    }
                }
            } catch {
                copy.refusal = "not merged: \(error)"
                warnings.append("kept \(path): \(error)")
            }
            copies.append(copy)
        }
        return copies
    }

    /// Merges another copy of the document into this bundle: a bundle directory, an archive
    /// made by `BundleArchive`, or a saved document (`Document.save()` bytes). The changes
    /// this bundle lacked are appended to this device's log.
    @discardableResult
    public func merge(from path: String) throws(StoreError) -> SyncReport {
        var report = SyncReport()
        let before = document.currentHeads
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .bundle(BundleError(.notFound, "nothing to merge", path: path))
        }
        if isDirectory.boolValue {
            try mergeBundle(at: path)
        } else {
            let bytes = try StoreError.wrapping { try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) }
            if bytes.starts(with: Array("IMPD".utf8)) || bytes.starts(with: Array("IMPI".utf8)) {
                try StoreError.wrapping { try document.merge(bytes) }
            } else {
                let directory = NSTemporaryDirectory() + "imprint-merge-\(UUID().uuidString)"
                let staging = directory + "/copy.imprint"
                defer { try? FileManager.default.removeItem(atPath: directory) }
                _ = try StoreError.wrapping { try BundleArchive.unarchive(path, to: staging) }
                do {
                    try mergeBundle(at: staging)
                } catch {
                    // Name the archive the user gave, not the staging folder it was unpacked to.
                    throw error.replacingPath(staging, with: path)
                }
            }
        }
        if let newBody = try? DocumentSchema.body(of: document) { body = newBody }
        let gained = document.changes(since: before)
        report.changesMerged = gained.count
        let countBefore = loadedHashes.count
        try persist(gained)
        report.changesPersisted = loadedHashes.count - countBefore
        return report
    }

    /// Reads another bundle (never writing to it) and merges it; a copy without
    /// metadata.json is merged only when its history descends from this document's.
    private func mergeBundle(at path: String) throws(StoreError) {
        let contents: BundleContents
        do {
            contents = try BundleStore.loadCopy(at: path, fallback: metadata)
        } catch let error as BundleError where error.code == .invalidArgument {
            throw .invalidRequest("\(path) holds another document: \(error.message)")
        } catch {
            throw StoreError.wrap(error)
        }
        if contents.metadataMissing {
            if contents.changes.isEmpty && contents.snapshots.isEmpty {
                throw .bundle(BundleError(.notFound, "not an Imprint bundle: no metadata.json", path: path))
            }
            if let reason = Ingest.foreignHistoryReason(of: contents, known: loadedHashes) {
                throw .invalidRequest("\(path) has no metadata.json and \(reason)")
            }
        }
        var ingest = Ingest()
        try ingest.update(document, from: contents, skipping: [])
        warnings += ingest.warnings
    }
}

