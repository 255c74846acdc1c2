import Foundation
import Testing
@testable import ImprintBundle
import ImprintTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A copy is deleted only when every byte of it is merged into this device's own log and it
/// has finished arriving (docs/bundle-format.md, "Conflict copies"): torn, damaged, growing,
/// young and downloading copies are merged as far as they read and kept with a reason.
@Suite struct CopyArrivalTests {
    let created = Date(timeIntervalSince1970: 1_800_000_000)

    func newBundle(_ dir: TemporaryDirectory, device: String = "phone", name: String = "paper.imprint") throws -> BundleStore {
        try BundleStore.create(at: dir.file(name), device: DeviceID(device),
                               metadata: BundleMetadata(documentID: "doc-7", title: "Paper", created: created, authors: [device]))
    }

    func logBytes(_ records: [LogRecord]) throws -> [UInt8] {
        let dir = TemporaryDirectory("log")
        let path = dir.file("x.log")
        try ChangeLogWriter(path: path, lock: FileLock(path: dir.file("x.lock"))).append(contentsOf: records)
        return try readFile(path)
    }

    /// Sets both timestamps of `path` an hour back: what a sync tool that preserves times
    /// does. The status-change time still says "just now".
    func backdate(_ path: String) {
        var times = [timespec(tv_sec: time(nil) - 3600, tv_nsec: 0), timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    let copyName = "laptop.sync-conflict-20261123-101010-ABCDEFG.log"
    var records: [LogRecord] { (0..<6).map { record("edit \($0) " + String(repeating: "x", count: $0 * 40)) } }

    @Test func aTornCopyIsMergedAsFarAsItReadsAndKeptUntilWhole() throws {
        let dir = TemporaryDirectory("arrival")
        let phone = try newBundle(dir)
        let whole = try logBytes(records)
        let copy = phone.layout.changesPath + "/" + copyName
        try writeFile(copy, Array(whole.dropLast(3)))

        var report = try phone.tidyConflictCopies(settle: .immediate)
        #expect(report.removed.isEmpty)
        #expect(report.kept[copy]?.contains("torn tail") == true, "\(report)")
        #expect(report.changesAbsorbed == 5)
        #expect(Set(try phone.ownLog().readAll().records) == Set(records.prefix(5)))

        // The rest arrives: now every byte is merged and the copy goes.
        try writeFile(copy, whole)
        report = try phone.tidyConflictCopies(settle: .immediate)
        #expect(report.removed == [copy])
        #expect(Set(try phone.ownLog().readAll().records) == Set(records))
    }

    @Test func aDamagedFrameKeepsTheCopy() throws {
        let dir = TemporaryDirectory("arrival")
        let phone = try newBundle(dir)
        var bytes = try logBytes(records)
        bytes[ChangeLogFormat.headerLength + 20] ^= 0x40 // inside the first frame's payload
        let copy = phone.layout.changesPath + "/" + copyName
        try writeFile(copy, bytes)
        let report = try phone.tidyConflictCopies(settle: .immediate)
        #expect(report.removed.isEmpty)
        #expect(report.kept[copy]?.contains("damaged") == true, "\(report)")
        #expect(report.changesAbsorbed == records.count - 1, "the frames after the damage were merged")
        #expect(try readFile(copy) == bytes, "a kept copy is never modified")
    }

    @Test func truncatedHeadersAndEmptyCopiesAreKept() throws {
        let dir = TemporaryDirectory("arrival")
        let phone = try newBundle(dir)
        let whole = try logBytes(records)
        let headerOnly = phone.layout.changesPath + "/laptop (conflicted copy 2026-11-23).log"
        let halfHeader = phone.layout.changesPath + "/" + copyName
        try writeFile(headerOnly, Array(whole.prefix(ChangeLogFormat.headerLength + 3)))
        try writeFile(halfHeader, Array(whole.prefix(7)))
        let report = try phone.tidyConflictCopies(settle: .immediate)
        #expect(report.removed.isEmpty)
        #expect(Set(report.kept.keys) == [headerOnly, halfHeader])
    }

    @Test func aYoungCopyIsKeptEvenWithAnOldModificationTime() throws {
        let dir = TemporaryDirectory("arrival")
        let phone = try newBundle(dir)
        let copy = phone.layout.changesPath + "/" + copyName
        try writeFile(copy, try logBytes(records))
        backdate(copy)
        let stamp = try #require(FileStamp.take(copy))
        #expect(!stamp.isQuiet(for: .seconds(5)), "ctime is recent although mtime is an hour old")
        #expect(stamp.isQuiet(for: .seconds(5), now: stamp.changedNanoseconds + 5_000_000_000))

        var report = try phone.tidyConflictCopies(settle: .sync)
        #expect(report.changesAbsorbed == records.count, "merged at once")
        #expect(report.kept[copy]?.contains("may still be arriving") == true, "\(report)")
        report = try phone.tidyConflictCopies(settle: .immediate)
        #expect(report.removed == [copy])
    }

    @Test func aCopyWithADownloadInProgressIsKept() throws {
        let dir = TemporaryDirectory("arrival")
        let phone = try newBundle(dir)
        let copy = phone.layout.changesPath + "/" + copyName
        try writeFile(copy, try logBytes(records))
        let download = phone.layout.changesPath + "/.syncthing." + copyName + ".tmp"
        try writeFile(download, [1, 2, 3])
        let inventory = try phone.layout.inventory()
        #expect(inventory.downloading == [download])
        #expect(inventory.changeLogs.map(\.path) == [copy], "a download is never read as a log")
        var report = try phone.tidyConflictCopies(settle: .immediate)
        #expect(report.kept[copy] == "a sync tool is still downloading it")
        try FileManager.default.removeItem(atPath: download)
        report = try phone.tidyConflictCopies(settle: .immediate)
        #expect(report.removed == [copy])
    }

    @Test func aDamagedSnapshotCopyIsKept() throws {
        let dir = TemporaryDirectory("arrival")
        let phone = try newBundle(dir)
        let snapshot = SnapshotFile(coveredChanges: [records[0].hash], snapshot: Array("state".utf8))
        let copy = phone.layout.snapshotsPath + "/laptop (conflicted copy).snapshot"
        var bytes = snapshot.encoded()
        bytes.removeLast()
        try writeFile(copy, bytes)
        let report = try phone.tidyConflictCopies(settle: .immediate)
        #expect(report.removed.isEmpty)
        #expect(report.kept[copy] != nil)
    }

    // MARK: Bundle-level copies

    @Test func aDuplicateHoldingOnlyMetadataIsKeptWhileYoung() throws {
        let dir = TemporaryDirectory("arrival")
        let phone = try newBundle(dir)
        let duplicate = dir.file("paper 2.imprint")
        try FileManager.default.createDirectory(atPath: duplicate, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: phone.layout.metadataPath, toPath: duplicate + "/metadata.json")
        #expect(try phone.duplicateBundles() == [duplicate])
        let report = try phone.absorbDuplicateBundle(at: duplicate, settle: .sync)
        #expect(report.removed.isEmpty)
        #expect(report.kept[duplicate]?.contains("may still be arriving") == true, "\(report)")
        #expect(TreeStamp.take(duplicate).entries.count == 2, "nothing was created inside the copy")
    }

    @Test func aDuplicateWithATornLogOrADownloadIsKept() throws {
        let dir = TemporaryDirectory("arrival")
        let phone = try newBundle(dir)
        let duplicate = try newBundle(dir, device: "laptop", name: "paper 2.imprint")
        let whole = try logBytes(records)
        try writeFile(duplicate.layout.changesPath + "/laptop.log", Array(whole.dropLast(1)))
        var report = try phone.absorbDuplicateBundle(at: duplicate.layout.root, settle: .immediate)
        #expect(report.removed.isEmpty)
        #expect(report.kept[duplicate.layout.root]?.contains("torn or still arriving") == true, "\(report)")
        #expect(report.changesAbsorbed == 5)

        try writeFile(duplicate.layout.changesPath + "/laptop.log", whole)
        try writeFile(duplicate.layout.changesPath + "/~syncthing~tablet.log.tmp", [0])
        report = try phone.absorbDuplicateBundle(at: duplicate.layout.root, settle: .immediate)
        #expect(report.kept[duplicate.layout.root]?.contains("download in progress") == true, "\(report)")

        try FileManager.default.removeItem(atPath: duplicate.layout.changesPath + "/~syncthing~tablet.log.tmp")
        report = try phone.absorbDuplicateBundle(at: duplicate.layout.root, settle: .immediate)
        #expect(report.removed == [duplicate.layout.root])
        #expect(Set(try phone.ownLog().readAll().records) == Set(records))
    }

    @Test(arguments: [0, 1, 2, 3])
    func aDuplicateWithABitFlipAnywhereInItsLogIsKept(seedOffset: UInt64) throws {
        var rng = SplitMix64(seed: 0xB17F11B + seedOffset)
        let dir = TemporaryDirectory("arrival")
        let phone = try newBundle(dir)
        let duplicate = try newBundle(dir, device: "laptop", name: "paper 2.imprint")
        var bytes = try logBytes(records)
        let position = Int.random(in: 0..<bytes.count, using: &rng)
        bytes[position] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
        try writeFile(duplicate.layout.changesPath + "/laptop.log", bytes)
        let report = try phone.absorbDuplicateBundle(at: duplicate.layout.root, settle: .immediate)
        #expect(report.removed.isEmpty, "flip at byte \(position)")
        #expect(report.kept[duplicate.layout.root] != nil, "flip at byte \(position)")
        #expect(try readFile(duplicate.layout.changesPath + "/laptop.log") == bytes)
    }

    @Test func aCopyWithoutMetadataIsFoundButNeedsTheEngine() throws {
        let dir = TemporaryDirectory("arrival")
        let phone = try newBundle(dir)
        let orphan = dir.file("paper (conflicted copy 2026-11-23).imprint")
        try FileManager.default.createDirectory(atPath: orphan + "/changes", withIntermediateDirectories: true)
        try writeFile(orphan + "/changes/laptop.log", try logBytes(records))
        // An unrelated folder with a copy-like name but nothing of a bundle is left alone.
        try FileManager.default.createDirectory(atPath: dir.file("paper 3.imprint"), withIntermediateDirectories: false)
        #expect(try phone.duplicateBundles() == [orphan])

        let contents = try BundleStore.loadCopy(at: orphan, fallback: try phone.load().metadata)
        #expect(contents.metadataMissing)
        #expect(contents.changes == records)
        let refused = #expect(throws: BundleError.self) { try phone.absorbDuplicateBundle(at: orphan, settle: .immediate) }
        #expect(refused?.code == .invalidArgument)
        let report = try phone.absorbDuplicateBundle(at: orphan, settle: .immediate, verifiedWithoutMetadata: true)
        #expect(report.removed == [orphan])
        #expect(Set(try phone.ownLog().readAll().records) == Set(records))
    }

    // MARK: Placeholders and downloads

    @Test func aBundleWhoseMetadataHasNotArrivedSaysSo() throws {
        let dir = TemporaryDirectory("arrival")
        let root = dir.file("paper.imprint")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        var error = #expect(throws: BundleError.self) { try BundleStore.open(at: root, device: DeviceID("phone")) }
        #expect(error?.code == .notFound)
        #expect(error?.message.contains("not an Imprint bundle") == true)

        try writeFile(root + "/.metadata.json.icloud", [0])
        error = #expect(throws: BundleError.self) { try BundleStore.open(at: root, device: DeviceID("phone")) }
        #expect(error?.code == .incomplete)
        #expect(error?.message.contains("iCloud placeholder") == true)

        try FileManager.default.removeItem(atPath: root + "/.metadata.json.icloud")
        try FileManager.default.createDirectory(atPath: root + "/changes", withIntermediateDirectories: false)
        try writeFile(root + "/changes/laptop.log", try logBytes(records))
        error = #expect(throws: BundleError.self) { try BundleStore.open(at: root, device: DeviceID("phone")) }
        #expect(error?.code == .incomplete)
        #expect(error?.message.contains("has not arrived yet") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root).sorted() == ["changes"], "opening created nothing")

        // Logs that arrived long ago without their metadata.json: damage, not a copy in progress.
        let longAgo = Date().addingTimeInterval(-(BundleLayout.metadataArrivalWindow + 60))
        try FileManager.default.setAttributes([.modificationDate: longAgo], ofItemAtPath: root + "/changes/laptop.log")
        error = #expect(throws: BundleError.self) { try BundleStore.open(at: root, device: DeviceID("phone")) }
        #expect(error?.code == .corrupt && error?.isHostileOrCorrupt == true)
        #expect(error?.message.contains("metadata.json is missing") == true, "\(String(describing: error))")
    }

    @Test func placeholdersOfLogsAreReportedNotReadAsEmpty() throws {
        let dir = TemporaryDirectory("arrival")
        let phone = try newBundle(dir)
        try writeFile(phone.layout.changesPath + "/.laptop.log.icloud", [0, 1])
        try writeFile(phone.layout.snapshotsPath + "/.laptop.snapshot.icloud", [0, 1])
        try writeFile(phone.layout.changesPath + "/.notes.txt.icloud", [0, 1]) // not bundle data
        let contents = try phone.load()
        #expect(contents.arrivalNotes.count == 2)
        #expect(contents.arrivalNotes.allSatisfy { $0.contains("not downloaded to this machine yet") })
        #expect(contents.arrivalNotes.contains { $0.hasPrefix("laptop.log ") })
    }
}

/// Names taken from the tools' own documentation and from what they were seen to write, kept
/// apart from the recogniser.
@Suite struct SyncToolFileNameTests {
    @Test(arguments: [
        (".syncthing.laptop.log.tmp", SyncToolFileName.downloading(finalName: "laptop.log")),
        ("~syncthing~laptop.log.tmp", .downloading(finalName: "laptop.log")),
        (".metadata.json.~3f9a01bc", .downloading(finalName: "metadata.json")),
        ("laptop.log.partial", .downloading(finalName: "laptop.log")),
        ("laptop.log.a1b2c3d4.partial", .downloading(finalName: "laptop.log")),
        (".laptop.snapshot.icloud", .placeholder(finalName: "laptop.snapshot")),
        (".metadata.json.icloud", .placeholder(finalName: "metadata.json")),
        (".dropbox.cache", .bookkeeping),
        (".dropbox", .bookkeeping),
        (".dropbox.attr", .bookkeeping),
    ])
    func recognises(_ name: String, _ expected: SyncToolFileName) {
        #expect(SyncToolFileName.classify(name) == expected)
    }

    @Test(arguments: ["laptop.log", "metadata.json", ".laptop.log.tmp-123-abcdef", "laptop.sync-conflict-20261123-101010-ABCDEFG.log",
                      ".icloud", ".partial", "paper 2.imprint", ".hidden"])
    func leavesOtherNamesAlone(_ name: String) {
        #expect(SyncToolFileName.classify(name) == nil)
    }
}
