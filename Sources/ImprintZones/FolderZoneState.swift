import Foundation

/// The records of a folder zone as its entries say, folded in `(savedAt, writer, seq)` order,
/// which every machine holding the same entries agrees on.
///
/// A save sets a record that is absent or deleted; a save of a live name with the same asset
/// hash changes nothing (a retry); with another hash, the earlier entry wins (two machines
/// that saved one name offline: the later one is a conflict loser, and its writer got
/// ``ZoneError/Code/recordExists`` had it known). A delete turns a live record into a tombstone.
struct FolderZoneState: Sendable {
    private(set) var records: [String: ZoneRecord] = [:]
    /// The newest `savedAt` of any entry folded in (the hybrid clock's floor).
    private(set) var newestSavedAt: Int64 = 0

    init(entries: [FolderZoneEntry]) {
        for entry in entries.sorted(by: { $0.order < $1.order }) { fold(entry) }
    }

    private mutating func fold(_ entry: FolderZoneEntry) {
        newestSavedAt = max(newestSavedAt, entry.savedAt)
        let savedAt = Date(timeIntervalSince1970: Double(entry.savedAt) / 1000)
        for save in entry.saves {
            if let current = records[save.recordName], !current.deleted { continue }
            records[save.recordName] = ZoneRecord(
                recordName: save.recordName, recordType: save.recordType, fields: save.fields, asset: save.asset,
                changeToken: entry.recordChangeToken, savedAt: savedAt)
        }
        for name in entry.deletes {
            guard var record = records[name], !record.deleted else { continue }
            record.deleted = true
            record.savedAt = savedAt
            record.changeToken = entry.recordChangeToken
            records[name] = record
        }
    }
}
