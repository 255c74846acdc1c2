import Foundation
import ImprintBundle
import ImprintCRDT
import Testing
@testable import ImprintStore
import ImprintTestSupport

/// A damaged frame in the middle of a device's log is damage, not a torn tail: the intact
/// frames after it are read, the next edit on that device quarantines the file instead of
/// truncating it, and nothing readable is lost.
@Suite struct DamagedLogTests {
    @Test func oneFlippedBitNeverCostsTheEditsAfterIt() throws {
        let temp = TemporaryDirectory()
        let laptop = try DeviceID("laptop")
        let path = temp.file("paper.imprint")
        let doc = try DocumentBundle.create(at: path, device: laptop, title: "Paper")
        for i in 0..<40 { try doc.insert("w\(i) ", at: try doc.text().unicodeScalars.count) }
        // Another machine holds a copy of everything (the sync tool carried the log there).
        try FileManager.default.copyItem(atPath: path, toPath: temp.file("backup.imprint"))

        // One flipped bit in frame 5 of the laptop's log.
        let log = path + "/changes/laptop.log"
        let before = try ChangeLogReader.read(at: log)
        #expect(before.records.count == 41)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: log)))
        let frameStart = ChangeLogFormat.headerLength + before.records.prefix(5).reduce(0) { $0 + ChangeLogFormat.frameHeaderLength + 33 + $1.bytes.count }
        bytes[frameStart + 20] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: log))

        // The next edit on that device: the log is quarantined, never truncated.
        let damaged = try DocumentBundle.open(at: path, device: laptop)
        #expect(damaged.warnings.contains { $0.contains("is damaged") }, "\(damaged.warnings)")
        try damaged.insert("after ", at: 0)
        #expect(damaged.warnings.contains { $0.contains("quarantined") }, "\(damaged.warnings)")
        let after = try ChangeLogReader.read(at: log)
        #expect(after.records.count == 41, "40 intact of 41, plus the new edit")
        #expect(after.damage.isEmpty && after.tail == .clean)
        let inventory = try BundleLayout(root: path).inventory()
        #expect(inventory.quarantined.count == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: inventory.quarantined[0])) == Data(bytes))

        // The missing change comes back from the other copy: every edit is there.
        let merged = try DocumentBundle.open(at: path, device: laptop)
        try merged.merge(from: temp.file("backup.imprint"))
        let text = try merged.text()
        for i in 0..<40 { #expect(text.contains("w\(i) "), "w\(i)") }
        #expect(text.hasPrefix("after "))
        let report = try merged.sync(settle: .immediate)
        #expect(report.quarantined == inventory.quarantined, "sync reports the quarantined file and keeps it")
        #expect(FileManager.default.fileExists(atPath: inventory.quarantined[0]))
    }
}
