import Foundation

/// One file of a folder zone's change log: one atomic batch of saves and deletes by one writer.
///
/// A writer's entries are numbered 1, 2, 3, … and never rewritten. `savedAt` (milliseconds
/// since 1970) is a hybrid logical clock: the writer takes the later of its wall clock and one
/// past the newest `savedAt` it has seen from any writer, so an entry always sorts after every
/// entry its writer had seen (a delete after the save it deletes), whatever the machines'
/// clocks say. `(savedAt, writer, seq)` orders all entries of a zone the same way on every
/// machine.
///
/// File format (UTF-8, three lines):
/// ```
/// imprint-zone-entry 1
/// {"deletes":[...],"saves":[...],"savedAt":...,"seq":...,"writer":"..."}
/// sha256 <lowercase hex SHA-256 of the JSON line's bytes>
/// ```
/// Decoding checks the header, the checksum, the JSON shape and every rule of ``ZoneRules``,
/// and that writer and seq match the file's place; any failure is a
/// ``ZoneError/Code/damagedRecord`` naming the file.
struct FolderZoneEntry: Sendable, Hashable, Codable {
    struct Save: Sendable, Hashable, Codable {
        var recordName: String
        var recordType: String
        var fields: ZoneRecordFields
        var asset: ZoneAsset
    }

    var writer: String
    var seq: UInt64
    var savedAt: Int64
    var saves: [Save]
    var deletes: [String]

    static let header = "imprint-zone-entry 1"
    /// 9999-12-31T23:59:59.999Z: later stamps are damage (and would overflow the hybrid clock).
    static let maximumSavedAt: Int64 = 253_402_300_799_999
    /// 1000 records of at most ~1 KiB of names and fields each, with room to spare.
    static let maximumFileBytes = 4 << 20

    /// The sort key every machine agrees on.
    var order: Order { Order(savedAt: savedAt, writer: writer, seq: seq) }

    struct Order: Comparable, Hashable, Sendable {
        var savedAt: Int64
        var writer: String
        var seq: UInt64
        static func < (a: Order, b: Order) -> Bool {
            (a.savedAt, a.writer, a.seq) < (b.savedAt, b.writer, b.seq)
        }
    }

    /// The record-level change token of what this entry set.
    var recordChangeToken: String { "\(writer).\(seq)" }

    func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = try encoder.encode(self)
        var bytes = Array((Self.header + "\n").utf8)
        bytes += json
        bytes += Array("\nsha256 \(SHA256Hex.digest(json))\n".utf8)
        return bytes
    }

    /// Decodes the file at `path`, which the layout says holds entry `seq` of `writer`.
    static func decode(_ bytes: [UInt8], writer: String, seq: UInt64, path: String) throws -> FolderZoneEntry {
        func damaged(_ why: String) -> ZoneError { ZoneError(.damagedRecord, "\(path): \(why)") }
        guard bytes.count <= maximumFileBytes else { throw damaged("over \(maximumFileBytes) bytes") }
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard lines.count == 4, lines[3].isEmpty else { throw damaged("not three lines (truncated?)") }
        guard lines[0].elementsEqual(header.utf8) else { throw damaged("unknown header") }
        let json = lines[1]
        let checksum = Array(lines[2])
        guard checksum.count == 71, checksum.prefix(7).elementsEqual("sha256 ".utf8) else { throw damaged("no checksum line") }
        guard checksum.dropFirst(7).elementsEqual(SHA256Hex.digest(json).utf8) else { throw damaged("checksum mismatch") }
        let entry: FolderZoneEntry
        do {
            entry = try JSONDecoder().decode(FolderZoneEntry.self, from: Data(json))
        } catch {
            throw damaged("JSON: \(String(describing: error).prefix(200))")
        }
        guard (0...maximumSavedAt).contains(entry.savedAt) else { throw damaged("savedAt out of range") }
        guard entry.writer == writer, entry.seq == seq else { throw damaged("entry says writer \(entry.writer.prefix(64)) seq \(entry.seq)") }
        guard entry.saves.count + entry.deletes.count >= 1,
              entry.saves.count + entry.deletes.count <= ZoneLimits.maximumStoredBatchRecords else { throw damaged("batch size out of range") }
        do {
            var names = Set<String>()
            for save in entry.saves {
                try ZoneRules.checkDraft(ZoneRecordDraft(recordName: save.recordName, recordType: save.recordType,
                                                         fields: save.fields, asset: .uploaded(save.asset)))
                guard names.insert(save.recordName).inserted else { throw damaged("record saved twice") }
            }
            for name in entry.deletes { try ZoneRules.checkRecordName(name) }
        } catch let error as ZoneError where error.code == .invalidArgument {
            throw damaged(error.context)
        }
        return entry
    }
}
