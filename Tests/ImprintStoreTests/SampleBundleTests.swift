import Foundation
import ImprintBundle
import Testing
@testable import ImprintStore
import ImprintTestSupport

/// Format-compatibility guard: every bundle in Bundles/ (written by earlier builds) still
/// opens to the document and history recorded in Bundles/expected.json.
@Suite struct SampleBundleTests {
    static let directory = repositoryRoot + "/Bundles"

    static func expected() throws -> [String: [String: Any]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/expected.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: [String: Any]])
    }

    @Test func everySampleIsListed() throws {
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: Self.directory).filter { $0.hasSuffix(".imprint") }
        #expect(Set(onDisk) == Set(try Self.expected().keys))
        #expect(onDisk.count >= 3)
    }

    @Test(arguments: ["empty.imprint", "notes.imprint", "synced.imprint"])
    func sampleOpensUnchanged(name: String) throws {
        let expected = try #require(try Self.expected()[name])
        let temp = TemporaryDirectory("sample")
        try copyTree(Self.directory + "/" + name, to: temp.file(name))
        let doc = try DocumentBundle.open(at: temp.file(name), device: try DeviceID("reader"))
        let json = try JSONSerialization.jsonObject(with: Data(try doc.jsonValue().serialized.utf8)) as? NSDictionary
        #expect(json == (expected["document"] as? NSDictionary))
        #expect(doc.history().count == expected["changes"] as? Int)
        #expect(doc.warnings.isEmpty)

        // Syncing a copy tidies its conflict copies and changes nothing visible.
        let text = try doc.text()
        try doc.sync(settle: .immediate)
        let reopened = try DocumentBundle.open(at: temp.file(name), device: try DeviceID("reader"))
        #expect(try reopened.text() == text)
        let inventory = try reopened.store.layout.inventory()
        #expect(inventory.changeLogs.allSatisfy { $0.conflictCopy == nil })
    }
}
