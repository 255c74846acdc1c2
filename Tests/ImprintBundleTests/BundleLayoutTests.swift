import Testing
@testable import ImprintBundle
import ImprintTestSupport
import ImprintFiles

@Suite struct BundleLayoutTests {
    @Test func pathsAreWhereTheSpecSays() throws {
        let layout = BundleLayout(root: "/x/paper.imprint/")
        let device = try DeviceID("laptop")
        #expect(layout.metadataPath == "/x/paper.imprint/metadata.json")
        #expect(layout.changeLogPath(for: device) == "/x/paper.imprint/changes/laptop.log")
        #expect(layout.snapshotPath(for: device) == "/x/paper.imprint/snapshots/laptop.snapshot")
        #expect(layout.logLock(for: device).path == "/x/paper.imprint/locks/laptop.lock")
        #expect(layout.bundleLock.path == "/x/paper.imprint/locks/bundle.lock")
        #expect(layout.assetsPath == "/x/paper.imprint/assets")
    }

    @Test func inventoryFindsLogsSnapshotsAndConflictCopiesAndIgnoresTheRest() throws {
        let dir = TemporaryDirectory()
        let layout = BundleLayout(root: dir.file("paper.imprint"))
        try layout.createDirectories()
        let files = [
            "changes/laptop.log", "changes/phone.log",
            "changes/laptop (conflicted copy 2025-04-10 093612).log",
            "changes/phone.sync-conflict-20260101-101010-ABCDEFG.log",
            "changes/phone 2.log",
            "changes/laptop-DESKTOP-9.log",
            "changes/.laptop.log.tmp-1-abc", "changes/README.txt", "changes/Upper.log",
            "snapshots/laptop.snapshot", "snapshots/phone (Bo's conflicted copy 2024-01-01).snapshot",
            "snapshots/laptop.log",
            "metadata.json", "metadata (conflicted copy).json", "metadata 2.json", "future-feature.bin",
        ]
        for file in files { try writeFile(layout.root + "/" + file, [1]) }
        let inventory = try layout.inventory()
        let logs = inventory.changeLogs.map { (POSIX.lastComponent(of: $0.path), $0.device.rawValue, $0.conflictCopy?.tool) }
        #expect(logs.map(\.0) == ["laptop (conflicted copy 2025-04-10 093612).log", "laptop-DESKTOP-9.log", "laptop.log",
                                  "phone 2.log", "phone.log", "phone.sync-conflict-20260101-101010-ABCDEFG.log"])
        #expect(logs.map(\.1) == ["laptop", "laptop", "laptop", "phone", "phone", "phone"])
        #expect(logs.map(\.2) == [.nextcloud, .oneDrive, nil, .iCloudDrive, nil, .syncthing])
        #expect(inventory.snapshots.map { POSIX.lastComponent(of: $0.path) } == ["laptop.snapshot", "phone (Bo's conflicted copy 2024-01-01).snapshot"])
        #expect(inventory.snapshots.map(\.device.rawValue) == ["laptop", "phone"])
        #expect(inventory.metadataConflictCopies.map { POSIX.lastComponent(of: $0) } == ["metadata (conflicted copy).json", "metadata 2.json"])
        #expect(Set(inventory.ignored.map { POSIX.lastComponent(of: $0) }) == [".laptop.log.tmp-1-abc", "README.txt", "Upper.log", "laptop.log"])
    }

    @Test func inventoryOfAnEmptyDirectoryIsEmpty() throws {
        let dir = TemporaryDirectory()
        let inventory = try BundleLayout(root: dir.path).inventory()
        #expect(inventory == BundleInventory())
    }
}
