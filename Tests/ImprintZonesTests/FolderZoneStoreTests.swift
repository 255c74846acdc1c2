import Foundation
@testable import ImprintZones
import ImprintTestSupport
import Testing

/// What only the folder store must survive: several machines (writers) over one directory or
/// over copies a sync tool keeps in step, files arriving late and out of order, sync tools'
/// temporary and conflict files, damaged files.
@Suite("Folder zone store")
struct FolderZoneStoreTests {
    static let zone = "doc_c0ffee"

    /// Copies the files of `writer` from machine `from` to machine `to`, as a sync tool
    /// would: entries (only `seqs`, when given) and assets, plus zone markers.
    static func sync(_ from: String, _ to: String, writer: String, seqs: [UInt64]? = nil) throws {
        let fileManager = FileManager.default
        let layoutFrom = FolderZoneLayout(root: from), layoutTo = FolderZoneLayout(root: to)
        try fileManager.createDirectory(atPath: layoutTo.zonePath(zone), withIntermediateDirectories: true)
        for name in try fileManager.contentsOfDirectory(atPath: layoutFrom.zonePath(zone)) where name.hasPrefix("zone-") {
            let target = layoutTo.zonePath(zone) + "/" + name
            if !fileManager.fileExists(atPath: target) { try fileManager.copyItem(atPath: layoutFrom.zonePath(zone) + "/" + name, toPath: target) }
        }
        for (source, target) in [(layoutFrom.assetsPath(zone, writer: writer), layoutTo.assetsPath(zone, writer: writer)),
                                 (layoutFrom.entriesPath(zone, writer: writer), layoutTo.entriesPath(zone, writer: writer))] {
            guard fileManager.fileExists(atPath: source) else { continue }
            try fileManager.createDirectory(atPath: target, withIntermediateDirectories: true)
            for name in try fileManager.contentsOfDirectory(atPath: source) {
                if let seqs, let seq = FolderZoneLayout.entrySeq(fileName: name), !seqs.contains(seq) { continue }
                if !fileManager.fileExists(atPath: target + "/" + name) { try fileManager.copyItem(atPath: source + "/" + name, toPath: target + "/" + name) }
            }
        }
    }

    /// Two machines, each with its own copy of the folder, the zone created on A and its
    /// marker synced to B; `sync` plays the sync tool between them.
    struct TwoMachines {
        let a = TemporaryDirectory("zones-a"), b = TemporaryDirectory("zones-b")
        let storeA: FolderZoneStore, storeB: FolderZoneStore

        init(clockA: @escaping @Sendable () -> Date = { Date() }, clockB: @escaping @Sendable () -> Date = { Date() }) async throws {
            storeA = try FolderZoneStore(root: a.path, writer: "machine-a", now: clockA)
            storeB = try FolderZoneStore(root: b.path, writer: "machine-b", now: clockB)
            _ = try await storeA.createZone(FolderZoneStoreTests.zone)
            try FolderZoneStoreTests.sync(a.path, b.path, writer: "machine-a")
        }
    }

    /// One machine ("laptop") with the zone created in a fresh folder.
    static func oneMachine(_ label: String) async throws -> (TemporaryDirectory, FolderZoneStore) {
        let directory = TemporaryDirectory(label)
        let store = try FolderZoneStore(root: directory.path, writer: "laptop")
        _ = try await store.createZone(zone)
        return (directory, store)
    }

    static func save(_ store: FolderZoneStore, _ name: String, _ bytes: [UInt8]) async throws -> ZoneRecord {
        let asset = try await store.uploadAsset(zoneId: zone, bytes: bytes)
        return try await store.saveRecords(zoneId: zone, [ZoneRecordDraft(recordName: name, recordType: "change", asset: .uploaded(asset))])[0]
    }

    @Test func twoInstancesOverOneDirectorySeeEachOther() async throws {
        let directory = TemporaryDirectory("zones-shared")
        let laptop = try FolderZoneStore(root: directory.path, writer: "laptop")
        let desktop = try FolderZoneStore(root: directory.path, writer: "desktop")
        _ = try await laptop.createZone(Self.zone)
        await expectZoneError(.zoneExists) { try await desktop.createZone(Self.zone) }
        _ = try await Self.save(laptop, "from-laptop", [1])
        _ = try await Self.save(desktop, "from-desktop", [2])
        for store in [laptop, desktop] {
            let names = Set(try await drainChanges(store, Self.zone).records.map(\.recordName))
            #expect(names == ["from-laptop", "from-desktop"])
            #expect(try await store.fetchAsset(zoneId: Self.zone, hash: ZoneAsset(of: [2]).hash) == [2])
        }
        // Each writer wrote only under its own name.
        let layout = FolderZoneLayout(root: directory.path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: layout.entriesPath(Self.zone)).sorted() == ["desktop", "laptop"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: layout.entriesPath(Self.zone, writer: "desktop")) == ["0000000000000001.rec"])
        // A save by one machine of a name the other saved with another asset is refused.
        await expectZoneError(.recordExists) { try await Self.save(desktop, "from-laptop", [3]) }
        // The other machine's subscription notices the change.
        let notifications = try await laptop.subscribe(zoneId: Self.zone)
        _ = try await Self.save(desktop, "later", [4])
        var iterator = notifications.makeAsyncIterator()
        #expect(try await iterator.next()?.zoneId == Self.zone)
    }

    @Test func entriesArrivingOutOfOrderAreAllDelivered() async throws {
        let machines = try await TwoMachines()
        let (a, b, storeA, storeB) = (machines.a, machines.b, machines.storeA, machines.storeB)
        for index in 1...4 { _ = try await Self.save(storeB, "b\(index)", [UInt8(index)]) }
        _ = try await Self.save(storeA, "a1", [100])
        var token = try await drainChanges(storeA, Self.zone).token
        // The sync tool delivers B's entries 3, then 1, then 4, then 2.
        for (seq, name) in [(UInt64(3), "b3"), (1, "b1"), (4, "b4"), (2, "b2")] {
            try Self.sync(b.path, a.path, writer: "machine-b", seqs: [seq])
            let page = try await drainChanges(storeA, Self.zone, since: token)
            #expect(page.records.map(\.recordName) == [name], "after entry \(seq) arrived")
            token = page.token
        }
        #expect(try await drainChanges(storeA, Self.zone, since: token).records.isEmpty)
        // Both machines agree on every record once everything is synced.
        try Self.sync(a.path, b.path, writer: "machine-a")
        let onA = latest(try await drainChanges(storeA, Self.zone).records)
        let onB = latest(try await drainChanges(storeB, Self.zone).records)
        #expect(onA == onB && onA.count == 5)
    }

    @Test func syncToolFilesAreNeverReadAsRecordsOrDamage() async throws {
        let (directory, store) = try await Self.oneMachine("zones-tools")
        let saved = try await Self.save(store, "real", [1, 2, 3])
        let before = try await drainChanges(store, Self.zone)
        let layout = FolderZoneLayout(root: directory.path)
        let entries = layout.entriesPath(Self.zone, writer: "laptop")
        let valid = try Data(contentsOf: URL(fileURLWithPath: entries + "/0000000000000001.rec"))
        let garbage = Data("partial garbage".utf8)
        let names = [
            ".syncthing.0000000000000002.rec.tmp", "~syncthing~0000000000000002.rec.tmp",
            "0000000000000001.sync-conflict-20250101-101010-ABCDEFG.rec", "0000000000000001 (conflicted copy 2025-01-01).rec",
            "0000000000000001 (Case Conflict).rec", "0000000000000001_conflict-20250101-101010.rec",
            ".0000000000000002.rec.icloud", "0000000000000002.rec.tmp", ".0000000000000002.rec.tmp-77-123", "0000000000000002.REC",
            "000000000000002.rec", "0000000000000000.rec", "desktop.ini", ".DS_Store", "Icon\r",
        ]
        for name in names {
            try (name.contains("conflict") || name.contains("Conflict") ? valid : garbage).write(to: URL(fileURLWithPath: entries + "/" + name))
        }
        for writerDir in ["laptop.sync-conflict-20250101-101010-ABCDEFG", "laptop (conflicted copy)", "Laptop", ".syncthing.laptop.tmp", "-x"] {
            try FileManager.default.createDirectory(atPath: layout.entriesPath(Self.zone) + "/" + writerDir, withIntermediateDirectories: true)
            try valid.write(to: URL(fileURLWithPath: layout.entriesPath(Self.zone) + "/" + writerDir + "/0000000000000001.rec"))
        }
        try FileManager.default.createDirectory(atPath: layout.entriesPath(Self.zone) + "/.dropbox.cache", withIntermediateDirectories: true)
        try garbage.write(to: URL(fileURLWithPath: layout.zonePath(Self.zone) + "/zone-laptop.sync-conflict-20250101-101010-ABCDEFG.json"))
        try garbage.write(to: URL(fileURLWithPath: layout.assetsPath(Self.zone, writer: "laptop") + "/\(saved.asset.hash).sync-conflict-20250101-101010-ABCDEFG"))

        let after = try await store.fetchChanges(zoneId: Self.zone, since: nil)
        #expect(after.damaged.isEmpty)
        #expect(after.records == before.records)
        #expect(try await store.fetchAsset(zoneId: Self.zone, hash: saved.asset.hash) == [1, 2, 3])
        // The store's next entry is number 2, whatever lies around.
        _ = try await Self.save(store, "next", [4])
        #expect(FileManager.default.fileExists(atPath: entries + "/0000000000000002.rec"))
    }

    @Test func damagedEntriesAreTypedAndHideNothingElse() async throws {
        let (directory, store) = try await Self.oneMachine("zones-damage")
        for index in 1...5 { _ = try await Self.save(store, "r\(index)", [UInt8(index)]) }
        let entries = FolderZoneLayout(root: directory.path).entriesPath(Self.zone, writer: "laptop")
        let second = entries + "/0000000000000002.rec", fourth = entries + "/0000000000000004.rec"
        let secondBytes = try Data(contentsOf: URL(fileURLWithPath: second))
        // A truncated file and a bit-flipped one (a fresh store: no cache of the good bytes).
        try secondBytes.prefix(secondBytes.count / 2).write(to: URL(fileURLWithPath: second))
        var fourthBytes = try Data(contentsOf: URL(fileURLWithPath: fourth))
        fourthBytes[fourthBytes.count / 2] ^= 0x10
        try fourthBytes.write(to: URL(fileURLWithPath: fourth))
        let reader = try FolderZoneStore(root: directory.path, writer: "reader")
        let page = try await reader.fetchChanges(zoneId: Self.zone, since: nil)
        #expect(Set(page.records.map(\.recordName)) == ["r1", "r3", "r5"])
        #expect(page.damaged.count == 2)
        #expect(page.damaged.allSatisfy { $0.code == .damagedRecord })
        #expect(Set(page.damaged.map { $0.context.components(separatedBy: ":")[0] }) == [second, fourth])
        #expect(try await reader.record(zoneId: Self.zone, named: "r5").asset == ZoneAsset(of: [5]))
        // Once the sync tool delivers the whole file, the next fetch from the same token has it.
        try secondBytes.write(to: URL(fileURLWithPath: second))
        let repaired = try await reader.fetchChanges(zoneId: Self.zone, since: page.changeToken)
        #expect(repaired.records.map(\.recordName) == ["r2"])
        #expect(repaired.damaged.count == 1)
    }

    @Test func damagedAssetsAreTypedAndAnIntactCopyIsUsed() async throws {
        let machines = try await TwoMachines()
        let (a, b, storeA, storeB) = (machines.a, machines.b, machines.storeA, machines.storeB)
        let record = try await Self.save(storeA, "r", [1, 2, 3, 4])
        let path = FolderZoneLayout(root: a.path).assetsPath(Self.zone, writer: "machine-a") + "/" + record.asset.hash
        try Data([1, 2, 3, 5]).write(to: URL(fileURLWithPath: path))
        await expectZoneError(.assetCorrupt) { try await storeA.fetchAsset(zoneId: Self.zone, hash: record.asset.hash) }
        // Machine B uploaded the same bytes; once its copy arrives, A reads that one.
        _ = try await storeB.uploadAsset(zoneId: Self.zone, bytes: [1, 2, 3, 4])
        try Self.sync(b.path, a.path, writer: "machine-b")
        #expect(try await storeA.fetchAsset(zoneId: Self.zone, hash: record.asset.hash) == [1, 2, 3, 4])
    }

    @Test func aDeleteOrdersAfterTheSaveItSawWhateverTheClocks() async throws {
        let machines = try await TwoMachines(clockA: { Date(timeIntervalSince1970: 2_000_000_000) },
                                             clockB: { Date(timeIntervalSince1970: 1_000_000_000) })
        let (a, b, storeA, storeB) = (machines.a, machines.b, machines.storeA, machines.storeB)
        _ = try await Self.save(storeA, "r", [1])
        try Self.sync(a.path, b.path, writer: "machine-a")
        #expect(try await storeB.deleteRecords(zoneId: Self.zone, names: ["r"]) == ["r"]) // B's clock is years behind
        try Self.sync(b.path, a.path, writer: "machine-b")
        await expectZoneError(.recordNotFound) { try await storeA.record(zoneId: Self.zone, named: "r") }
    }

    @Test func offlineSavesOfOneNameConvergeOnOneWinner() async throws {
        let machines = try await TwoMachines()
        let (a, b, storeA, storeB) = (machines.a, machines.b, machines.storeA, machines.storeB)
        _ = try await Self.save(storeA, "same", [1])
        _ = try await Self.save(storeB, "same", [2])
        try Self.sync(a.path, b.path, writer: "machine-a")
        try Self.sync(b.path, a.path, writer: "machine-b")
        let onA = try await storeA.record(zoneId: Self.zone, named: "same")
        let onB = try await storeB.record(zoneId: Self.zone, named: "same")
        #expect(onA == onB)
    }

    /// Two instances that (wrongly) share a writer id still never replace each other's
    /// entries: publishing never overwrites, so a taken number moves the writer on.
    @Test func concurrentSavesUnderOneWriterIdLoseNothing() async throws {
        let directory = TemporaryDirectory("zones-same-writer")
        let first = try FolderZoneStore(root: directory.path, writer: "laptop")
        let second = try FolderZoneStore(root: directory.path, writer: "laptop")
        _ = try await first.createZone(Self.zone)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask { _ = try await Self.save(index.isMultiple(of: 2) ? first : second, "r\(index)", [UInt8(index)]) }
            }
            try await group.waitForAll()
        }
        let names = Set(try await drainChanges(first, Self.zone).records.map(\.recordName))
        #expect(names == Set((0..<20).map { "r\($0)" }))
        let files = try FileManager.default.contentsOfDirectory(atPath: FolderZoneLayout(root: directory.path).entriesPath(Self.zone, writer: "laptop"))
        #expect(files.count == 20 && files.allSatisfy { FolderZoneLayout.entrySeq(fileName: $0) != nil })
    }

    /// Symbolic links and FIFOs a peer planted under entry names are not followed or waited on.
    @Test func linksAndFifosAreNotRead() async throws {
        let (directory, store) = try await Self.oneMachine("zones-links")
        _ = try await Self.save(store, "real", [1])
        let peer = FolderZoneLayout(root: directory.path).entriesPath(Self.zone, writer: "peer")
        try FileManager.default.createDirectory(atPath: peer, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: peer + "/0000000000000001.rec", withDestinationPath: "/etc/passwd")
        #expect(mkfifo(peer + "/0000000000000002.rec", 0o644) == 0)
        let page = try await store.fetchChanges(zoneId: Self.zone, since: nil)
        #expect(page.records.map(\.recordName) == ["real"] && page.damaged.isEmpty)
    }

    /// A creation marker with hostile content still marks the zone as existing; nothing crashes.
    @Test func hostileZoneMarkersAreTolerated() async throws {
        let seed = testSeed("hostileZoneMarkers", fallback: 0x3a_4e_12)
        var rng = SplitMix64(seed: seed)
        let directory = TemporaryDirectory("zones-markers")
        let store = try FolderZoneStore(root: directory.path, writer: "laptop")
        let layout = FolderZoneLayout(root: directory.path)
        for (index, content) in [[UInt8](), Array("{".utf8), Array(#"{"incarnation":5}"#.utf8), [UInt8](repeating: 0x41, count: 10_000),
                                 (0..<300).map { _ in UInt8(truncatingIfNeeded: rng.next()) }].enumerated() {
            let zone = "doc_marker\(index)"
            try FileManager.default.createDirectory(atPath: layout.zonePath(zone), withIntermediateDirectories: true)
            try Data(content).write(to: URL(fileURLWithPath: layout.markerPath(zone, writer: "peer")))
            await expectZoneError(.zoneExists) { try await store.createZone(zone) }
            let asset = try await store.uploadAsset(zoneId: zone, bytes: [1])
            _ = try await store.saveRecords(zoneId: zone, [ZoneRecordDraft(recordName: "r", recordType: "change", asset: .uploaded(asset))])
            let page = try await drainChanges(store, zone)
            #expect(page.records.map(\.recordName) == ["r"])
            #expect(try await store.fetchChanges(zoneId: zone, since: page.token).records.isEmpty)
        }
    }

    /// A planted entry with the last number, or a far-future stamp, is an error, not an overflow.
    @Test func extremeNumbersAndStampsDoNotOverflow() async throws {
        let (directory, store) = try await Self.oneMachine("zones-extreme")
        _ = try await Self.save(store, "first", [1])
        let entries = FolderZoneLayout(root: directory.path).entriesPath(Self.zone, writer: "laptop")
        let valid = try Data(contentsOf: URL(fileURLWithPath: entries + "/0000000000000001.rec"))
        try valid.write(to: URL(fileURLWithPath: entries + "/" + FolderZoneLayout.entryFileName(FolderZoneLayout.maximumSeq)))
        await expectZoneError(.io) { try await Self.save(store, "second", [2]) }
        #expect(try await store.fetchChanges(zoneId: Self.zone, since: nil).damaged.count == 1) // it names another seq
    }

    @Test func writerIdsAreChecked() throws {
        let directory = TemporaryDirectory("zones-writer")
        for bad in ["", "Laptop", "lap top", "../x", "-x", ".x", String(repeating: "a", count: 65)] {
            #expect(throws: ZoneError.self) { try FolderZoneStore(root: directory.path, writer: bad) }
        }
    }
}
