import Foundation
import ImprintBundle
import ImprintCRDT
import Testing
@testable import ImprintStore
import ImprintTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Damage in one place never costs intact data elsewhere: a damaged or forged snapshot is
/// ignored in favour of the logs, a document known to be incomplete says so, and files of the
/// wrong type where a log belongs are damage (exit 2), not I/O trouble.
@Suite struct DamagedSnapshotTests {
    let laptop = try! DeviceID("laptop")
    let phone = try! DeviceID("phone")

    /// A bundle where the laptop wrote and compacted (its snapshot holds the start), then wrote
    /// more, and the phone wrote on top.
    func compactedBundle(_ temp: TemporaryDirectory) throws -> String {
        let path = temp.file("paper.imprint")
        let doc = try DocumentBundle.create(at: path, device: laptop, title: "Paper")
        for word in ["one ", "two ", "three "] { try doc.insert(word, at: try doc.text().unicodeScalars.count) }
        try doc.sync(compact: true, settle: .immediate)
        try doc.insert("four ", at: try doc.text().unicodeScalars.count)
        try DocumentBundle.open(at: path, device: phone).insert("five ", at: 0)
        return path
    }

    @Test func aDamagedSnapshotIsIgnoredAndTheOwnerWritesANewOne() throws {
        let temp = TemporaryDirectory()
        let path = try compactedBundle(temp)
        // The phone syncs too, so its snapshot covers everything; then the laptop's is damaged.
        try DocumentBundle.open(at: path, device: phone).sync(compact: true, settle: .immediate)
        let snapshot = path + "/snapshots/laptop.snapshot"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: snapshot)))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: snapshot))

        let doc = try DocumentBundle.open(at: path, device: laptop)
        #expect(try doc.text() == "five one two three four ")
        #expect(doc.warnings.contains { $0.contains("laptop.snapshot") && $0.contains("ignored") }, "\(doc.warnings)")
        #expect(doc.incompleteness == nil)
        let report = try doc.sync(compact: true, settle: .immediate)
        #expect(report.snapshotWritten)
        #expect(try SnapshotFile.read(at: snapshot).coveredChanges.count == doc.document.allChanges().count)
        #expect(try DocumentBundle.open(at: path, device: laptop).warnings.isEmpty)
    }

    @Test func aRemovedSnapshotMakesTheDocumentKnownIncomplete() async throws {
        let temp = TemporaryDirectory()
        let path = try compactedBundle(temp)
        try FileManager.default.removeItem(atPath: path + "/snapshots/laptop.snapshot")
        #expect(throws: StoreError.self) { try DocumentBundle.open(at: path, device: laptop) }

        // With the creating change still in a log, the rest reads as incomplete, not whole.
        let other = temp.file("other.imprint")
        let doc = try DocumentBundle.create(at: other, device: laptop, title: "Other")
        try doc.insert("kept ", at: 0)
        try doc.sync(compact: true, settle: .immediate)
        try doc.insert("lost-base ", at: 5)
        try doc.insert("after ", at: 15)
        // Drop the log record of "lost-base" (as if that stretch were gone): "after" depends on it.
        let log = other + "/changes/laptop.log"
        let records = try ChangeLogReader.read(at: log).records
        try FileManager.default.removeItem(atPath: log)
        try ChangeLogWriter(path: log, lock: FileLock(path: other + "/locks/laptop.lock")).append(contentsOf: [records[records.count - 1]])
        let partial = try DocumentBundle.open(at: other, device: phone)
        #expect(partial.incompleteness?.contains("1 change waits") == true || partial.incompleteness?.contains("wait for changes") == true,
                "\(String(describing: partial.incompleteness))")
        #expect(try partial.text() == "kept ")

        let refused = try await CLITests.imprint(["text", other], in: temp.path)
        #expect(refused.status == 2 && refused.stderr.hasPrefix("error: incomplete:") && refused.stderr.contains("--allow-incomplete"), "\(refused)")
        let edit = try await CLITests.imprint(["edit", other, "--insert", "0", "x"], in: temp.path)
        #expect(edit.status == 2, "\(edit)")
        let allowed = try await CLITests.imprint(["text", other, "--allow-incomplete"], in: temp.path)
        #expect(allowed.status == 0 && allowed.stdout == "kept " && allowed.stderr.contains("warning: incomplete"), "\(allowed)")
    }

    @Test func aForgedSnapshotLosesToTheLogs() throws {
        let temp = TemporaryDirectory()
        let path = temp.file("paper.imprint")
        let actor = ActorID.named("laptop-session")
        let doc = try DocumentBundle.create(at: path, device: laptop, title: "Paper", actor: actor)
        try doc.insert("the real text", at: 0)

        // Another device's snapshot claims the laptop actor's seq 2 with other content.
        let forger = try Document.load(try DocumentBundle.open(at: path, device: phone).document.fork(at: [doc.document.allChanges()[0].hash]).save(), actor: actor)
        let body = try DocumentSchema.body(of: forger)
        try forger.change { tx in try tx.splice(body, at: 0, insert: "forged") }
        let covered = try forger.allChanges().map { try ImprintBundle.RecordHash(bytes: $0.hash.bytes) }
        try SnapshotFile(coveredChanges: covered, snapshot: forger.save()).write(to: path + "/snapshots/evil.snapshot")

        let reopened = try DocumentBundle.open(at: path, device: phone)
        #expect(try reopened.text() == "the real text")
        #expect(reopened.warnings.contains { $0.contains("evil.snapshot") && $0.contains("forged or damaged") }, "\(reopened.warnings)")
    }

    @Test func filesOfTheWrongTypeAreDamageExitTwo() async throws {
        let temp = TemporaryDirectory()
        let path = try compactedBundle(temp)
        try FileManager.default.createDirectory(atPath: path + "/changes/zed.log", withIntermediateDirectories: false)
        let text = try await CLITests.imprint(["text", path], in: temp.path)
        #expect(text.status == 2 && text.stderr.contains("a directory where a change log file belongs"), "\(text)")
        try FileManager.default.removeItem(atPath: path + "/changes/zed.log")

        try FileManager.default.removeItem(atPath: path + "/changes/phone.log")
        #expect(mkfifo(path + "/changes/phone.log", 0o644) == 0)
        let edit = try await CLITests.imprint(["edit", path, "--insert", "0", "x"], device: "phone", in: temp.path)
        #expect(edit.status == 2 && edit.stderr.contains("a FIFO"), "\(edit)")
    }
}
