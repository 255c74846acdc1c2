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
        metadata = contents.metadata
        loadedHashes.formUnion(contents.knownHashes)
        devices.formUnion((contents.logReports + contents.snapshotReports).map(\.device))
        ownLogRecords = contents.logReports.first { $0.device == device && !$0.isConflictCopy }?.records ?? 0
        if let newBody = try? DocumentSchema.body(of: document) { body = newBody }
    }

    /// Writes this device's snapshot covering every change the document holds, then compacts
    /// this device's log (bundle-format.md, section 4). Returns the log records removed.
    @discardableResult
    public func writeSnapshot() throws(StoreError) -> Int {
        let covered = try StoreError.wrapping {
            try document.allChanges().map { try ImprintBundle.ChangeHash(bytes: $0.hash.bytes) }
        }
        let file = SnapshotFile(coveredChanges: covered, snapshot: document.save())
        let removed = try StoreError.wrapping { try store.writeSnapshot(file) }
        loadedHashes.formUnion(covered)
        return removed
    }

    /// Merges every device log, every file-level conflict copy and every duplicate bundle
    /// (`paper 2.imprint`, …) now; writes a snapshot of the result, so every merged change is
    /// durable in this device's own files; only then deletes the copies
    /// (`tidyConflictCopies`, `absorbDuplicateBundle`). `compact` writes the snapshot (and
    /// compacts this device's log) even when nothing was merged; so does a log of
    /// `compactionThreshold` records or more.
    @discardableResult
    public func sync(compact: Bool = false) throws(StoreError) -> SyncReport {
        var report = SyncReport()
        let before = document.currentHeads
        try readNewContents()
        let duplicates = try StoreError.wrapping { try store.duplicateBundles() }
        for path in duplicates {
            let contents = try StoreError.wrapping { try BundleStore.open(at: path, device: device).load() }
            var ingest = Ingest()
            do {
                try ingest.update(document, from: contents, skipping: loadedHashes)
                warnings += ingest.warnings
            } catch {
                warnings.append("kept duplicate bundle \(path): \(error)")
                report.kept[path] = "\(error)"
            }
        }
        let gained = document.changes(since: before)
        report.changesMerged = gained.count
        // Everything gained here came from other files; the ones no file of the bundle holds
        // (a duplicate bundle's) go to this device's log.
        let countBefore = loadedHashes.count
        try persist(gained)
        report.changesPersisted = loadedHashes.count - countBefore
        let inventory = try StoreError.wrapping { try store.layout.inventory() }
        let hasCopies = inventory.changeLogs.contains { $0.conflictCopy != nil }
            || inventory.snapshots.contains { $0.conflictCopy != nil }
            || !duplicates.isEmpty
        if compact || hasCopies || report.changesMerged > 0 || ownLogRecords >= Self.compactionThreshold {
            try writeSnapshot()
            report.snapshotWritten = true
        }
        let tidy = try StoreError.wrapping { try store.tidyConflictCopies() }
        report.removed += tidy.removed
        report.kept.merge(tidy.kept) { a, _ in a }
        for path in duplicates where report.kept[path] == nil {
            let absorbed = try StoreError.wrapping { try store.absorbDuplicateBundle(at: path) }
            report.removed += absorbed.removed
            report.kept.merge(absorbed.kept) { a, _ in a }
        }
        metadata = try StoreError.wrapping { try BundleMetadata.read(at: store.layout.metadataPath) }
        return report
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
                try StoreError.wrapping { try BundleArchive.unarchive(path, to: staging) }
                try mergeBundle(at: staging)
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

    private func mergeBundle(at path: String) throws(StoreError) {
        let other = try StoreError.wrapping { try BundleStore.open(at: path, device: device) }
        let contents = try StoreError.wrapping { try other.load() }
        guard contents.metadata.documentID == metadata.documentID else {
            throw .invalidRequest("\(path) holds another document (documentId \(contents.metadata.documentID), not \(metadata.documentID))")
        }
        var ingest = Ingest()
        try ingest.update(document, from: contents, skipping: [])
        warnings += ingest.warnings
    }
}

