import Testing
@testable import ImprintBundle

@Suite struct ConflictCopyNameTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let tool: ConflictCopyName.Tool
        let original: String
        var testDescription: String { name }
    }

    static let copies: [Case] = [
        // Syncthing: <stem>.sync-conflict-<YYYYMMDD>-<HHMMSS>-<first 7 of device id>.<ext>
        Case(name: "laptop.sync-conflict-20260413-091523-K3X2R2T.log", tool: .syncthing, original: "laptop.log"),
        Case(name: "metadata.sync-conflict-20250101-000000-ABCDEFG.json", tool: .syncthing, original: "metadata.json"),
        Case(name: "paper.sync-conflict-20260818-173636-D4LGQYW.imprint", tool: .syncthing, original: "paper.imprint"),
        Case(name: "notes.sync-conflict-20150811-101010.txt", tool: .syncthing, original: "notes.txt"),
        Case(name: "Makefile.sync-conflict-20240229-235959-ZZZZZZZ", tool: .syncthing, original: "Makefile"),
        Case(name: "a.b.sync-conflict-20240229-235959-ZZZZZZZ.gz", tool: .syncthing, original: "a.b.gz"),
        // Nextcloud / ownCloud desktop clients.
        Case(name: "mydata (conflicted copy 2018-04-10 093612).txt", tool: .nextcloud, original: "mydata.txt"),
        Case(name: "laptop (conflicted copy 2025-04-10 093612).log", tool: .nextcloud, original: "laptop.log"),
        Case(name: "paper (conflicted copy alice 2025-04-10 093612).imprint", tool: .nextcloud, original: "paper.imprint"),
        Case(name: "laptop_conflict-20160101-153110.log", tool: .nextcloudLegacy, original: "laptop.log"),
        Case(name: "report_conflict-20160101-153110", tool: .nextcloudLegacy, original: "report"),
        // Dropbox.
        Case(name: "laptop (conflicted copy).log", tool: .dropbox, original: "laptop.log"),
        Case(name: "laptop (Ana's conflicted copy 2019-06-10).log", tool: .dropbox, original: "laptop.log"),
        Case(name: "metadata (John Smith’s conflicted copy 2021-12-31).json", tool: .dropbox, original: "metadata.json"),
        Case(name: "paper (MacBook Pro's conflicted copy 2024-02-02 (1)).imprint", tool: .dropbox, original: "paper.imprint"),
        Case(name: "Paper (Case Conflict).imprint", tool: .dropbox, original: "Paper.imprint"),
        Case(name: "café (Unicode Encoding Conflict).txt", tool: .dropbox, original: "café.txt"),
        // iCloud Drive: "name 2.ext", also for bundle directories.
        Case(name: "paper 2.imprint", tool: .iCloudDrive, original: "paper.imprint"),
        Case(name: "laptop 2.log", tool: .iCloudDrive, original: "laptop.log"),
        Case(name: "metadata 3.json", tool: .iCloudDrive, original: "metadata.json"),
        Case(name: "my paper 12.imprint", tool: .iCloudDrive, original: "my paper.imprint"),
        // OneDrive: the computer name appended.
        Case(name: "laptop-DESKTOP-4PIIBJ1.log", tool: .oneDrive, original: "laptop.log"),
        Case(name: "paper-LAPTOP7.imprint", tool: .oneDrive, original: "paper.imprint"),
        Case(name: "metadata-WORKPC.json", tool: .oneDrive, original: "metadata.json"),
    ]

    @Test(arguments: copies)
    func recognisesConflictCopies(_ c: Case) throws {
        let parsed = try #require(ConflictCopyName.parse(c.name))
        #expect(parsed.tool == c.tool)
        #expect(parsed.original == c.original)
    }

    static let notCopies: [String] = [
        "laptop.log", "metadata.json", "paper.imprint", "my-device.log", "device-2.log",
        "a1b2c3.log", "paper 1.imprint", "paper2.imprint", "x (draft).txt", "conflicted copy.txt",
        "notes.sync-conflict.txt", "laptop_conflict.log", "-DESKTOP.log", "report-final.docx",
        ".metadata.json.tmp-12-abc", "", "dir/laptop 2.log",
    ]

    @Test(arguments: notCopies)
    func leavesOtherNamesAlone(_ name: String) {
        #expect(ConflictCopyName.parse(name) == nil)
    }

    @Test func copiesOfCopiesPeelToTheRoot() {
        #expect(ConflictCopyName.rootOriginal(of: "a.sync-conflict-20250101-000000-AAAAAAA.sync-conflict-20250102-000000-BBBBBBB.log") == "a.log")
        #expect(ConflictCopyName.rootOriginal(of: "paper 2 (conflicted copy).imprint") == "paper.imprint")
        #expect(ConflictCopyName.rootOriginal(of: "paper.imprint") == nil)
    }

    @Test func deviceIDsNeverReadAsConflictCopies() throws {
        for good in ["laptop", "a", "0", "my-phone_2", String(repeating: "x", count: 64)] {
            #expect(throws: Never.self) { try DeviceID(good) }
        }
        for bad in ["", "Laptop", "-x", "_x", "a.b", "a b", "a/b", String(repeating: "x", count: 65),
                    "x_conflict-20160101-153110", "é"] {
            let error = #expect(throws: BundleError.self, "\(bad)") { try DeviceID(bad) }
            #expect(error?.code == .invalidDeviceID)
        }
    }
}
