import Foundation
import Testing
@testable import ImprintBundle
import ImprintTestSupport
import ImprintFiles

@Suite struct BundleStoreTests {
    let created = Date(timeIntervalSince1970: 1_800_000_000)

    func newBundle(_ dir: TemporaryDirectory, device: String = "laptop", name: String = "paper.imprint") throws -> BundleStore {
        try BundleStore.create(at: dir.file(name), device: DeviceID(device),
                               metadata: BundleMetadata(documentID: "doc-7", title: "Paper", created: created, authors: [device]))
    }

    /// Writes a change log holding `records` at `path` (as another machine would have).
    func writeLog(_ path: String, _ records: [LogRecord]) throws {
        let lock = FileLock(path: NSTemporaryDirectory() + "/imprint-test-\(UUID().uuidString).lock")
        try ChangeLogWriter(path: path, lock: lock).append(contentsOf: records)
    }

    @Test func createRefusesAnExistingBundleAndOpenChecksIt() throws {
        let dir = TemporaryDirectory("store")
        _ = try newBundle(dir)
        let again = #expect(throws: BundleError.self) { try newBundle(dir) }
        #expect(again?.code == .alreadyExists)
        let missing = #expect(throws: BundleError.self) { try BundleStore.open(at: dir.file("nope.imprint"), device: DeviceID("x")) }
        #expect(missing?.code == .notFound)
        try FileManager.default.createDirectory(atPath: dir.file("empty.imprint"), withIntermediateDirectories: false)
        #expect(throws: BundleError.self) { try BundleStore.open(at: dir.file("empty.imprint"), device: DeviceID("x")) }
    }

    @Test func loadIsTheUnionOfEveryDevicesLog() throws {
        let dir = TemporaryDirectory("store")
        let laptop = try newBundle(dir)
        let phone = try BundleStore.open(at: laptop.layout.root, device: DeviceID("phone"))
        try laptop.append([record("l1"), record("shared")])
        try phone.append([record("p1"), record("shared")])
        try laptop.append([record("l2")])
        try writeFile(laptop.layout.root + "/changes/notes.txt", [1, 2, 3]) // ignored
        for store in [laptop, phone] {
            let contents = try store.load()
            #expect(contents.changes == [record("l1"), record("shared"), record("l2"), record("p1")])
            #expect(contents.logReports.map(\.records) == [3, 2])
            #expect(!contents.hasDamage)
            #expect(contents.metadata.documentID == "doc-7")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: laptop.layout.changesPath).sorted() == ["laptop.log", "notes.txt", "phone.log"])
    }

    @Test func conflictCopiesAreMergedThenTidiedIntoTheOwnLog() throws {
        let dir = TemporaryDirectory("store")
        let phone = try newBundle(dir, device: "phone")
        try phone.append([record("p1")])
        let changes = phone.layout.changesPath
        try writeLog(changes + "/laptop.log", [record("l1")])
        try writeLog(changes + "/laptop (conflicted copy 2026-01-02 101010).log", [record("l1"), record("lost on the other machine")])
        try writeLog(changes + "/laptop.sync-conflict-20260102-101010-ABCDEFG.log", [record("p1"), record("syncthing copy")])
        try writeFile(changes + "/laptop 2.log", Array("garbage, not a log".utf8))

        let contents = try phone.load()
        #expect(Set(contents.changes) == Set([record("p1"), record("l1"), record("lost on the other machine"), record("syncthing copy")]))
        #expect(contents.hasDamage) // the garbage copy is reported
        #expect(contents.logReports.first { $0.path.hasSuffix("laptop 2.log") }?.error?.code == .corrupt)

        let report = try phone.tidyConflictCopies(settle: .immediate)
        // l1, "lost…", "syncthing copy" were not in phone.log; p1 was.
        #expect(report.changesAbsorbed == 3)
        #expect(report.removed.map { POSIX.lastComponent(of: $0) } == ["laptop (conflicted copy 2026-01-02 101010).log", "laptop.sync-conflict-20260102-101010-ABCDEFG.log"])
        #expect(report.kept.keys.map { POSIX.lastComponent(of: $0) } == ["laptop 2.log"])
        #expect(try ChangeLogReader.read(at: phone.layout.changeLogPath(for: DeviceID("phone"))).records
                == [record("p1"), record("l1"), record("lost on the other machine"), record("syncthing copy")])
        // Nothing was lost by tidying.
        #expect(Set(try phone.load().changes) == Set(contents.changes))
        // Another device's canonical log is never touched.
        #expect(try ChangeLogReader.read(at: changes + "/laptop.log").records == [record("l1")])
    }

    @Test func snapshotCompactsOnlyTheOwnLog() throws {
        let dir = TemporaryDirectory("store")
        let laptop = try newBundle(dir)
        let phone = try BundleStore.open(at: laptop.layout.root, device: DeviceID("phone"))
        try laptop.append([record("a"), record("b"), record("c")])
        try phone.append([record("p")])
        let snapshot = SnapshotFile(coveredChanges: [record("a").hash, record("b").hash, record("p").hash], snapshot: Array("state".utf8))
        let removed = try laptop.writeSnapshot(snapshot)
        #expect(removed == 2)
        #expect(try ChangeLogReader.read(at: laptop.layout.changeLogPath(for: DeviceID("laptop"))).records == [record("c")])
        #expect(try ChangeLogReader.read(at: phone.layout.changeLogPath(for: DeviceID("phone"))).records == [record("p")])
        let contents = try phone.load()
        #expect(contents.snapshots.map(\.file) == [snapshot])
        #expect(contents.changes == [record("c"), record("p")])
        #expect(contents.knownHashes == Set(["a", "b", "c", "p"].map { record($0).hash }))
        // Appending after compaction continues the rewritten log.
        try laptop.append([record("d")])
        #expect(try ChangeLogReader.read(at: laptop.layout.changeLogPath(for: DeviceID("laptop"))).records == [record("c"), record("d")])
    }

    @Test func snapshotConflictCopyIsKeptUntilCovered() throws {
        let dir = TemporaryDirectory("store")
        let laptop = try newBundle(dir)
        let copyPath = laptop.layout.snapshotsPath + "/phone (conflicted copy).snapshot"
        try SnapshotFile(coveredChanges: [record("x").hash], snapshot: [1]).write(to: copyPath)
        var report = try laptop.tidyConflictCopies(settle: .immediate)
        #expect(report.removed.isEmpty)
        #expect(report.kept[copyPath] != nil)
        #expect(try laptop.load().snapshots.count == 1)
        // The engine merged it and wrote this device's snapshot covering x: now it can go.
        try laptop.writeSnapshot(SnapshotFile(coveredChanges: [record("x").hash], snapshot: [2]))
        report = try laptop.tidyConflictCopies(settle: .immediate)
        #expect(report.removed == [copyPath])
        #expect(!POSIX.exists(copyPath))
    }

    @Test func metadataConflictCopiesMerge() throws {
        let dir = TemporaryDirectory("store")
        let laptop = try newBundle(dir)
        var other = try BundleMetadata.read(at: laptop.layout.metadataPath)
        other.title = "Renamed elsewhere"
        other.modified = created.addingTimeInterval(100)
        other.authors = ["phone"]
        try other.write(to: laptop.layout.root + "/metadata (conflicted copy).json")
        #expect(try laptop.load().metadata.title == "Renamed elsewhere")
        let updated = try laptop.updateMetadata(settle: .immediate) { $0.extra["pinned"] = .bool(true) }
        #expect(updated.authors == ["laptop", "phone"])
        #expect(updated.title == "Renamed elsewhere")
        #expect(!POSIX.exists(laptop.layout.root + "/metadata (conflicted copy).json"))
        #expect(try BundleMetadata.read(at: laptop.layout.metadataPath) == updated)
    }

    @Test func duplicateBundleIsAbsorbedAndRemoved() throws {
        let dir = TemporaryDirectory("store")
        let laptop = try newBundle(dir)
        try laptop.append([record("mine")])
        // iCloud Drive made "paper 2.imprint" with changes and an asset of its own.
        let duplicate = try newBundle(dir, device: "phone", name: "paper 2.imprint")
        try duplicate.append([record("theirs"), record("mine")])
        let asset = try duplicate.assets.add(bytes: Array("picture".utf8))
        // An unrelated document and a non-copy name are left alone.
        _ = try BundleStore.create(at: dir.file("paper 3.imprint"), device: DeviceID("x"),
                                   metadata: BundleMetadata(documentID: "other-doc", title: "", created: created))
        _ = try newBundle(dir, device: "x", name: "paperback.imprint")

        #expect(try laptop.duplicateBundles() == [dir.file("paper 2.imprint")])
        let report = try laptop.absorbDuplicateBundle(at: dir.file("paper 2.imprint"), settle: .immediate)
        #expect(report.changesAbsorbed == 1)
        #expect(report.removed == [dir.file("paper 2.imprint")])
        #expect(!POSIX.exists(dir.file("paper 2.imprint")))
        #expect(try laptop.load().changes == [record("mine"), record("theirs")])
        #expect(laptop.assets.contains(asset))
        #expect(try laptop.removeUnreferencedAssets([asset, asset]) == [asset])
        #expect(!laptop.assets.contains(asset))
        #expect(try laptop.load().metadata.authors == ["laptop", "phone"])
        #expect(POSIX.exists(dir.file("paper 3.imprint")))
    }

    @Test func duplicateBundleWithUncoveredSnapshotIsKept() throws {
        let dir = TemporaryDirectory("store")
        let laptop = try newBundle(dir)
        let duplicate = try newBundle(dir, device: "phone", name: "paper (conflicted copy).imprint")
        try duplicate.writeSnapshot(SnapshotFile(coveredChanges: [record("only in snapshot").hash], snapshot: [9]))
        let report = try laptop.absorbDuplicateBundle(at: duplicate.layout.root, settle: .immediate)
        #expect(report.removed.isEmpty)
        #expect(report.kept[duplicate.layout.root] != nil)
        #expect(POSIX.exists(duplicate.layout.root))
    }
}
