import Foundation
import ImprintBundle
import ImprintCRDT
import Testing
@testable import ImprintStore
import ImprintTestSupport

/// Assets are referenced from the document, so every device learns of them through sync.
@Suite struct AssetReferenceTests {
    @Test func assetsAreReferencedFromTheDocumentAndRemovedWithTheirReference() throws {
        let temp = TemporaryDirectory("assets")
        let laptop = try DeviceID("laptop")
        let phone = try DeviceID("phone")
        let doc = try DocumentBundle.create(at: temp.file("a.imprint"), device: laptop, title: "A")
        let file = temp.file("photo.jpg")
        try #require(FileManager.default.createFile(atPath: file, contents: Data((0..<5000).map { UInt8($0 % 251) })))
        let id = try doc.addAsset(contentsOf: file, name: "photo.jpg")
        #expect(try doc.assetReferences() == [id.hex: "photo.jpg"])
        #expect(doc.store.assets.contains(id))
        // Another device sees the reference after opening the same bundle.
        let other = try DocumentBundle.open(at: temp.file("a.imprint"), device: phone)
        #expect(try other.assetReferences()[id.hex] == "photo.jpg")
        // Adding the same bytes again is deduplicated; the reference stays one key.
        #expect(try other.addAsset(contentsOf: file, name: "photo.jpg") == id)
        #expect(try other.store.assets.list().count == 1)
        // Metadata edits cannot forge asset references.
        #expect(throws: StoreError.self) { try other.set(DocumentSchema.assetKey(id.hex), to: "x") }
        // Removing drops the reference, then the unreferenced file.
        #expect(try other.removeAsset(id))
        #expect(try other.assetReferences().isEmpty)
        #expect(!other.store.assets.contains(id))
        let reopened = try DocumentBundle.open(at: temp.file("a.imprint"), device: laptop)
        #expect(try reopened.assetReferences().isEmpty)
    }
}
