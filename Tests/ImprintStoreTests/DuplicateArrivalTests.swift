import Foundation
import ImprintBundle
import ImprintCRDT
import Testing
@testable import ImprintStore
import ImprintTestSupport

/// Duplicate bundles and copies that arrive in pieces, as `DocumentBundle` sees them: read at
/// open without being touched, merged by `sync`, removed only when whole and settled, and
/// copies without metadata.json merged only when their history is this document's.
@Suite struct DuplicateArrivalTests {
    let laptop = try! DeviceID("laptop")
    let phone = try! DeviceID("phone")

    /// A bundle made on the laptop, a copy of it on the phone, and laptop edits the phone has
    /// not seen yet.
    func twoCopies(_ temp: TemporaryDirectory) throws -> (laptop: DocumentBundle, phonePath: String) {
        try FileManager.default.createDirectory(atPath: temp.file("laptop"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: temp.file("phone"), withIntermediateDirectories: true)
        let doc = try DocumentBundle.create(at: temp.file("laptop/paper.imprint"), device: laptop, title: "Paper")
        try doc.insert("shared ", at: 0)
        try FileManager.default.copyItem(atPath: temp.file("laptop/paper.imprint"), toPath: temp.file("phone/paper.imprint"))
        try doc.insert("laptop-only ", at: 7)
        return (doc, temp.file("phone/paper.imprint"))
    }

    @Test func openShowsADuplicateWithoutTouchingIt() throws {
        let temp = TemporaryDirectory()
        let (_, phonePath) = try twoCopies(temp)
        let duplicate = temp.file("phone/paper 2.imprint")
        try FileManager.default.copyItem(atPath: temp.file("laptop/paper.imprint"), toPath: duplicate)
        let before = TreeStamp.take(duplicate)

        let doc = try DocumentBundle.open(at: phonePath, device: phone)
        #expect(try doc.text() == "shared laptop-only ")
        #expect(doc.warnings.contains { $0.contains("paper 2.imprint") && $0.contains("imprint sync") }, "\(doc.warnings)")
        #expect(TreeStamp.take(duplicate) == before, "opening read the duplicate without writing to it")

        let report = try doc.sync(settle: .immediate)
        #expect(report.removed == [duplicate])
        #expect(report.changesMerged >= 1)
        #expect(try DocumentBundle.open(at: phonePath, device: laptop).text() == "shared laptop-only ")
    }

    @Test func aCopyWithoutMetadataIsMergedWhenItDescendsFromThisDocument() throws {
        let temp = TemporaryDirectory()
        let (_, phonePath) = try twoCopies(temp)
        // A sync tool kept writing the laptop's log into a folder already tidied away.
        let orphan = temp.file("phone/paper 2.imprint")
        try FileManager.default.createDirectory(atPath: orphan + "/changes", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: temp.file("laptop/paper.imprint/changes/laptop.log"), toPath: orphan + "/changes/laptop.log")

        let doc = try DocumentBundle.open(at: phonePath, device: phone)
        #expect(try doc.text() == "shared laptop-only ")
        let report = try doc.sync(settle: .immediate)
        #expect(report.removed == [orphan])
        #expect(report.mergedFrom.keys.contains { $0.hasPrefix(orphan) }, "\(report.mergedFrom)")
        #expect(try DocumentBundle.open(at: phonePath, device: laptop).text() == "shared laptop-only ")
    }

    @Test func aCopyWithoutMetadataFromAnotherDocumentIsKeptUnmerged() throws {
        let temp = TemporaryDirectory()
        let (_, phonePath) = try twoCopies(temp)
        let stranger = try DocumentBundle.create(at: temp.file("stranger.imprint"), device: laptop, title: "Other")
        try stranger.insert("not ours", at: 0)
        let orphan = temp.file("phone/paper 2.imprint")
        try FileManager.default.createDirectory(atPath: orphan + "/changes", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: temp.file("stranger.imprint/changes/laptop.log"), toPath: orphan + "/changes/laptop.log")

        let doc = try DocumentBundle.open(at: phonePath, device: phone)
        #expect(try doc.text() == "shared ")
        let report = try doc.sync(settle: .immediate)
        #expect(report.removed.isEmpty)
        #expect(report.kept[orphan]?.contains("another document") == true, "\(report.kept)")
        #expect(FileManager.default.fileExists(atPath: orphan + "/changes/laptop.log"))
        #expect(try DocumentBundle.open(at: phonePath, device: phone).text() == "shared ")
    }

    @Test func syncCountsWhatIsNewToThisDevice() throws {
        let temp = TemporaryDirectory()
        let (_, phonePath) = try twoCopies(temp)
        // The phone writes once, so its own files hold the shared history.
        let first = try DocumentBundle.open(at: phonePath, device: phone)
        try first.sync(compact: true, settle: .immediate)
        // The laptop's log arrives (the sync tool replaced the canonical file).
        try FileManager.default.removeItem(atPath: phonePath + "/changes/laptop.log")
        try FileManager.default.copyItem(atPath: temp.file("laptop/paper.imprint/changes/laptop.log"), toPath: phonePath + "/changes/laptop.log")

        let doc = try DocumentBundle.open(at: phonePath, device: phone)
        let report = try doc.sync(settle: .immediate)
        #expect(report.changesMerged == 1, "the laptop's one new change, though open() had already read it")
        #expect(report.mergedFrom == [phonePath + "/changes/laptop.log": 1])
        #expect(try doc.sync(settle: .immediate).changesMerged == 0)
    }

    @Test func aBundleStillArrivingIsIncompleteNotNotFound() throws {
        let temp = TemporaryDirectory()
        let (_, phonePath) = try twoCopies(temp)
        try FileManager.default.moveItem(atPath: phonePath + "/metadata.json", toPath: temp.file("metadata.json"))
        #expect {
            try DocumentBundle.open(at: phonePath, device: phone)
        } throws: { error in
            guard case StoreError.incomplete(let message) = error else { return false }
            return message.contains("metadata.json has not arrived")
        }
    }
}
