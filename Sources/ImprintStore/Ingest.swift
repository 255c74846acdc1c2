import ImprintBundle
import ImprintCRDT

/// Turns `BundleContents` (opaque records and snapshots) into engine state: decodes and
/// checks every change, loads snapshots, and sorts damage into fatal (canonical files,
/// undecodable changes) and tolerable (conflict copies, torn tails of logs still arriving).
struct Ingest {
    /// One line per tolerated problem.
    var warnings: [String] = []

    /// Files whose damage may hide changes (damaged snapshots, damaged stretches of logs,
    /// snapshots that disagree with the logs), one line each.
    var damage: [String] = []

    /// A new document holding everything in `contents`. A snapshot that does not load, or
    /// that disagrees with the logs (a change whose actor and sequence number the logs hold
    /// with another hash: forged or damaged), is ignored with a warning; the logs win.
    mutating func build(from contents: BundleContents, actor: ActorID) throws(StoreError) -> Document {
        try checkReports(contents)
        do {
            return try buildTrustingSnapshots(contents, actor: actor)
        } catch let error {
            guard case .engine(let engineError) = error, engineError.code == .duplicateSequence,
                  !contents.snapshots.isEmpty else { throw error }
        }
        // Some snapshot disagrees with the logs. Rebuild from the logs alone, then add each
        // snapshot only if it merges without conflict (tried on a fork first).
        var document = Document(actor: actor)
        try apply(contents.changes, to: document)
        for snapshot in contents.snapshots.sorted(by: { $0.file.coveredChanges.count > $1.file.coveredChanges.count }) {
            do {
                let trial = try document.fork(actor: actor)
                try trial.merge(snapshot.file.snapshot)
                document = trial
            } catch {
                let line = "\(snapshot.path) disagrees with the logs (\(StoreError.wrap(error))): ignored as forged or damaged; the logs' changes are kept"
                warnings.append(line)
                damage.append(line)
            }
        }
        return document
    }

    private mutating func buildTrustingSnapshots(_ contents: BundleContents, actor: ActorID) throws(StoreError) -> Document {
        var document: Document?
        var covered = Set<ImprintBundle.RecordHash>()
        // The largest snapshot first: smaller ones are then usually covered and skipped.
        let snapshots = contents.snapshots.sorted { $0.file.coveredChanges.count > $1.file.coveredChanges.count }
        for snapshot in snapshots where !snapshot.file.coveredChanges.allSatisfy(covered.contains) {
            if let existing = document {
                if try merge(snapshot, into: existing) { covered.formUnion(snapshot.file.coveredChanges) }
            } else {
                do {
                    document = try Document.load(snapshot.file.snapshot, actor: actor)
                    covered.formUnion(snapshot.file.coveredChanges)
                } catch {
                    try tolerate(snapshot, error)
                }
            }
        }
        let result = document ?? Document(actor: actor)
        // Records a loaded snapshot already holds need no decoding.
        try apply(covered.isEmpty ? contents.changes : contents.changes.filter { !covered.contains($0.hash) }, to: result)
        return result
    }

    /// Adds to `document` whatever `contents` holds beyond `known`. With `asCopy` (a
    /// duplicate bundle, another copy being merged), every file of `contents` is a copy: damage
    /// in it is a warning, never fatal, since the bundle's own files are intact.
    mutating func update(_ document: Document, from contents: BundleContents,
                         skipping known: Set<ImprintBundle.RecordHash>, asCopy: Bool = false) throws(StoreError) {
        try checkReports(contents, asCopy: asCopy)
        for snapshot in contents.snapshots where !snapshot.file.coveredChanges.allSatisfy(known.contains) {
            var snapshot = snapshot
            if asCopy { snapshot.isConflictCopy = true }
            _ = try merge(snapshot, into: document)
        }
        try apply(contents.changes.filter { !known.contains($0.hash) }, to: document)
    }

    /// Why the changes of a copy without metadata.json cannot be this document's, or nil
    /// when they descend from it: every change either is known or has parents (a change
    /// without parents starts a document, and this document's first change is known), and
    /// every snapshot covers at least one known change (a snapshot holds a whole history,
    /// this document's first change included).
    static func foreignHistoryReason(of contents: BundleContents,
                                      known: Set<ImprintBundle.RecordHash>) -> String? {
        for snapshot in contents.snapshots where !snapshot.file.coveredChanges.contains(where: known.contains) {
            return "its snapshot \(snapshot.path) shares no change with this document"
        }
        for record in contents.changes where !known.contains(record.hash) {
            guard let change = try? Change(bytes: record.bytes) else {
                return "change \(record.hash.hex.prefix(16)) does not decode"
            }
            if change.deps.isEmpty {
                return "it holds the first change of another document (\(record.hash.hex.prefix(16)))"
            }
        }
        return nil
    }

    /// Merges a snapshot; false when it was a damaged conflict copy and was skipped.
    private mutating func merge(_ snapshot: BundleContents.LoadedSnapshot, into document: Document) throws(StoreError) -> Bool {
        do {
            try document.merge(snapshot.file.snapshot)
            return true
        } catch {
            try tolerate(snapshot, error)
            return false
        }
    }

    /// A snapshot that does not load or merge is ignored: the other snapshots and the logs
    /// stand in for it.
    private mutating func tolerate(_ snapshot: BundleContents.LoadedSnapshot, _ error: any Error) throws(StoreError) {
        let wrapped = StoreError.wrap(error)
        if case .engine(let e) = wrapped, e.code == .duplicateSequence {
            let line = "\(snapshot.path) disagrees with the logs (\(wrapped)): ignored as forged or damaged; the logs' changes are kept"
            warnings.append(line)
            if !snapshot.isConflictCopy { damage.append(line) }
            return
        }
        if snapshot.isConflictCopy {
            warnings.append("ignored damaged conflict copy \(snapshot.path): \(wrapped)")
        } else {
            let line = "snapshot \(snapshot.path) does not load (\(wrapped)): ignored; the other snapshots and the logs are used"
            warnings.append(line)
            damage.append(line)
        }
    }

    private mutating func checkReports(_ contents: BundleContents, asCopy: Bool = false) throws(StoreError) {
        for note in contents.arrivalNotes {
            warnings.append("incomplete: \(note)")
        }
        for path in contents.quarantined {
            warnings.append("quarantined: \(path) holds a damaged log moved aside whole; its intact changes were kept, it is never merged or deleted (inspect or remove it by hand)")
        }
        let reports = contents.logReports.map { ($0, false) } + contents.snapshotReports.map { ($0, true) }
        for (report, isSnapshot) in reports {
            let isOwnFile = !report.isConflictCopy && !asCopy
            if let error = report.error {
                if isOwnFile && isSnapshot {
                    // A damaged snapshot does not block the bundle: the logs and other snapshots stand in.
                    let line = "snapshot \(report.path) is damaged (\(error)): ignored; the other snapshots and the logs are used"
                    warnings.append(line)
                    damage.append(line)
                    continue
                }
                guard !isOwnFile else { throw .bundle(error) }
                warnings.append("ignored damaged conflict copy \(report.path): \(error)")
            } else if !report.damage.isEmpty {
                if isOwnFile { damage.append("\(report.path) has damaged stretches") }
                warnings.append("\(report.path) is damaged: \(report.damage.byteCount) bytes in \(report.damage.count) stretch(es) from byte \(report.damage[0].range.lowerBound) do not read; the intact frames around them were merged")
            } else if report.droppedBytes > 0 {
                warnings.append("ignored \(report.droppedBytes) bytes at the end of \(report.path) (torn or still arriving)")
            }
        }
    }

    private func apply(_ records: [ImprintBundle.LogRecord], to document: Document) throws(StoreError) {
        var changes: [Change] = []
        changes.reserveCapacity(records.count)
        for record in records {
            let change: Change
            do {
                change = try Change(bytes: record.bytes)
            } catch {
                throw .corrupt("change \(record.hash.hex.prefix(16)) does not decode: \(StoreError.wrap(error))", path: nil)
            }
            guard change.hash.bytes == record.hash.bytes else {
                throw .corrupt("change stored as \(record.hash.hex.prefix(16)) hashes to \(change.hash.hex.prefix(16))", path: nil)
            }
            changes.append(change)
        }
        try StoreError.wrapping { try document.apply(changes) }
    }
}
