import Foundation
import ImprintBundle
import ImprintCRDT
import Testing
@testable import ImprintStore
import ImprintTestSupport

/// DocumentBundle on one machine: durability of edits, attribution, merging other copies,
/// and the damage policy of docs/document-schema.md.
@Suite struct DocumentBundleTests {
    let laptop = try! DeviceID("laptop")
    let phone = try! DeviceID("phone")

    func makeBundle(_ temp: TemporaryDirectory, _ name: String = "doc.imprint") throws -> DocumentBundle {
        let doc = try DocumentBundle.create(at: temp.file(name), device: laptop, title: "T")
        try doc.insert("hello", at: 0)
        return doc
    }

    @Test func editsAreDurableAndAttributedToDevices() throws {
        let temp = TemporaryDirectory()
        _ = try makeBundle(temp)
        let other = try DocumentBundle.open(at: temp.file("doc.imprint"), device: phone)
        #expect(try other.text() == "hello")
        try other.insert(" world", at: 5, message: "phone")
        try other.set("status", to: "draft")
        #expect(throws: StoreError.self) { try other.set("body", to: "x") }
        #expect(throws: StoreError.self) { try other.insert("x", at: 99) }

        let reopened = try DocumentBundle.open(at: temp.file("doc.imprint"), device: laptop)
        #expect(try reopened.text() == "hello world")
        let history = reopened.history()
        #expect(history.map(\.device) == ["laptop", "laptop", "phone", "phone"])
        #expect(history[2].message == "phone")
        #expect(try reopened.document.get(.root, "status")?.string == "draft")
    }

    /// A batch's edits reach `beforePersisting` while the log does not hold them yet, are
    /// durable when it returns, and are persisted also when the batch throws.
    @Test func aBatchShowsItsChangesBeforeOneWrite() throws {
        let temp = TemporaryDirectory()
        let doc = try makeBundle(temp)
        var seen: [Change] = []
        var onDiskMeanwhile = ""
        try doc.batch {
            try doc.insert(" big", at: 5)
            try doc.batch { try doc.insert(" world", at: 9) }  // part of the outer batch
            try doc.set("status", to: "draft")
        } beforePersisting: { changes in
            seen = changes
            onDiskMeanwhile = (try? DocumentBundle.open(at: temp.file("doc.imprint"), device: phone).text()) ?? "unreadable"
        }
        #expect(seen.count == 3, "one call, with the three changes")
        #expect(onDiskMeanwhile == "hello")
        #expect(try DocumentBundle.open(at: temp.file("doc.imprint"), device: phone).text() == "hello big world")

        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try doc.batch {
                try doc.insert("!", at: 15)
                throw Stop()
            }
        }
        #expect(try DocumentBundle.open(at: temp.file("doc.imprint"), device: phone).text() == "hello big world!")
    }

    @Test func sameDeviceOnTwoMachinesDoesNotCollide() throws {
        // A restored backup: two openings as the same device write concurrently; their logs
        // meet as a conflict copy and must merge (distinct session actors, no duplicate seq).
        let temp = TemporaryDirectory()
        _ = try makeBundle(temp)
        try FileManager.default.copyItem(atPath: temp.file("doc.imprint"), toPath: temp.file("backup.imprint"))
        try DocumentBundle.open(at: temp.file("doc.imprint"), device: laptop).insert("A", at: 0)
        try DocumentBundle.open(at: temp.file("backup.imprint"), device: laptop).insert("B", at: 5)
        try FileManager.default.copyItem(atPath: temp.file("backup.imprint/changes/laptop.log"),
                                         toPath: temp.file("doc.imprint/changes/laptop (Case Conflict).log"))
        let doc = try DocumentBundle.open(at: temp.file("doc.imprint"), device: phone)
        #expect(try doc.text() == "AhelloB")
        let report = try doc.sync(settle: .immediate)
        #expect(report.removed.count == 1 && report.snapshotWritten)
        #expect(try DocumentBundle.open(at: temp.file("doc.imprint"), device: laptop).text() == "AhelloB")
    }

    @Test func mergesBundlesArchivesAndSavedDocuments() throws {
        let temp = TemporaryDirectory()
        let doc = try makeBundle(temp)
        try FileManager.default.copyItem(atPath: temp.file("doc.imprint"), toPath: temp.file("copy.imprint"))
        let copy = try DocumentBundle.open(at: temp.file("copy.imprint"), device: phone)
        try copy.insert("1", at: 0)
        #expect(try doc.merge(from: temp.file("copy.imprint")).changesMerged == 1)

        try copy.insert("2", at: 0)
        try BundleArchive.archive(bundleAt: temp.file("copy.imprint"), to: temp.file("copy.tar.zst"))
        #expect(try doc.merge(from: temp.file("copy.tar.zst")).changesMerged == 1)

        try copy.insert("3", at: 0)
        try Data(copy.document.save()).write(to: URL(fileURLWithPath: temp.file("copy.bin")))
        let report = try doc.merge(from: temp.file("copy.bin"))
        #expect(report.changesMerged == 1 && report.changesPersisted == 1)
        #expect(try DocumentBundle.open(at: temp.file("doc.imprint"), device: laptop).text() == "321hello")

        _ = try DocumentBundle.create(at: temp.file("other.imprint"), device: laptop, title: "other")
        #expect(throws: StoreError.self) { try doc.merge(from: temp.file("other.imprint")) }
    }

    @Test func damagePolicy() throws {
        let temp = TemporaryDirectory()
        _ = try makeBundle(temp)
        let logPath = temp.file("doc.imprint/changes/laptop.log")

        // A torn tail (a file still arriving) is a warning.
        let handle = try #require(FileHandle(forWritingAtPath: logPath))
        handle.seekToEndOfFile()
        handle.write(Data([0x40, 0, 0, 0, 1, 2]))
        handle.closeFile()
        let torn = try DocumentBundle.open(at: temp.file("doc.imprint"), device: phone)
        #expect(try torn.text() == "hello")
        #expect(torn.warnings.count == 1)

        // A damaged conflict copy is a warning and is kept by sync.
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: temp.file("doc.imprint/changes/laptop 2.log")))
        let withCopy = try DocumentBundle.open(at: temp.file("doc.imprint"), device: phone)
        #expect(withCopy.warnings.count == 2)
        #expect(try withCopy.sync(settle: .immediate).kept.count == 1)

        // A record that is not an engine change is corrupt data.
        let writer = try ChangeLogWriter(path: temp.file("doc.imprint/changes/mallory.log"),
                                         lock: FileLock(path: temp.file("doc.imprint/locks/mallory.lock")))
        let junk = Array("not a change".utf8)
        try writer.append(contentsOf: [LogRecord(hash: try ImprintBundle.RecordHash(bytes: Array(repeating: 7, count: 32)), bytes: junk)])
        do {
            _ = try DocumentBundle.open(at: temp.file("doc.imprint"), device: phone)
            Issue.record("opened a bundle holding a junk change")
        } catch {
            #expect(error.isHostileOrCorrupt)
        }
    }

    @Test func bundleWithoutItsCreatingChangeIsIncompleteNotCorrupt() throws {
        let temp = TemporaryDirectory()
        _ = try makeBundle(temp)
        // Another machine has metadata.json but not yet the creator's log.
        try FileManager.default.removeItem(atPath: temp.file("doc.imprint/changes/laptop.log"))
        do {
            _ = try DocumentBundle.open(at: temp.file("doc.imprint"), device: phone)
            Issue.record("opened a bundle without a body")
        } catch {
            guard case .incomplete = error else { Issue.record("expected .incomplete, got \(error)"); return }
            #expect(!error.isHostileOrCorrupt)
        }
    }

    @Test func syncCompactsALongOwnLog() throws {
        let temp = TemporaryDirectory()
        let doc = try makeBundle(temp)
        for i in 0..<DocumentBundle.compactionThreshold { try doc.insert("\(i % 10)", at: 0) }
        let reopened = try DocumentBundle.open(at: temp.file("doc.imprint"), device: laptop)
        let report = try reopened.sync(settle: .immediate)
        #expect(report.snapshotWritten)
        #expect(try reopened.store.ownLog().readAll().records.isEmpty)
        #expect(try DocumentBundle.open(at: temp.file("doc.imprint"), device: phone).text() == doc.text())
    }
}
