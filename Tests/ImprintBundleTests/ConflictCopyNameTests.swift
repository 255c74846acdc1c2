import Testing
@testable import ImprintBundle
import ImprintTestSupport

@Suite struct ConflictCopyNameTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let tool: ConflictCopyName.Tool
        let original: String
        var testDescription: String { name }
    }

    /// The real names (`RealConflictCopyNames`, kept apart from the parser).
    static let copies: [Case] = RealConflictCopyNames.examples.map {
        Case(name: $0.copy, tool: ConflictCopyName.Tool(rawValue: $0.tool)!, original: $0.original)
    }

    @Test func everyToolHasRealExamples() {
        #expect(Set(RealConflictCopyNames.examples.map(\.tool)) == Set(ConflictCopyName.Tool.allCases.map(\.rawValue)))
    }

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
