#if canImport(Glibc)
import Glibc
#endif
import Testing
import Foundation
import ImprintFiles
import ImprintTestSupport

private func readFile(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
private func writeFile(_ path: String, _ bytes: [UInt8]) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
private struct ProducerGaveUp: Error {}

@Suite struct AtomicFileTests {
    @Test func writesAndReplaces() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("a.json")
        try AtomicFile.write(Array("one".utf8), to: path)
        #expect(try readFile(path) == Array("one".utf8))
        try AtomicFile.write(Array("two!".utf8), to: path)
        #expect(try readFile(path) == Array("two!".utf8))
        #expect(try POSIX.listDirectory(dir.path) == ["a.json"])
    }

    @Test func failedProducerLeavesOldContentAndNoTemporary() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("a.json")
        try AtomicFile.write(Array("old".utf8), to: path)
        #expect(throws: ProducerGaveUp.self) {
            try AtomicFile.write(to: path) { fd, temporary in
                try POSIX.writeAll(fd, Array("half".utf8), path: temporary)
                throw ProducerGaveUp()
            }
        }
        #expect(try readFile(path) == Array("old".utf8))
        #expect(try POSIX.listDirectory(dir.path) == ["a.json"])
    }

    @Test func staleTemporariesAreRecognisedAndRemoved() throws {
        let dir = TemporaryDirectory()
        let stale = AtomicFile.temporaryPath(for: dir.file("metadata.json"))
        try writeFile(stale, [1, 2, 3])
        try writeFile(dir.file("keep.txt"), [1])
        #expect(AtomicFile.isTemporaryName(POSIX.lastComponent(of: stale)))
        #expect(!AtomicFile.isTemporaryName("metadata.json"))
        // Too young to be stale under an age guard; removed without one.
        #expect(try AtomicFile.removeStaleTemporaries(in: dir.path, olderThan: .seconds(3600)) == 0)
        var old = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, stale, &old, 0) == 0)
        #expect(try AtomicFile.removeStaleTemporaries(in: dir.path, olderThan: .seconds(3600)) == 1)
        try writeFile(stale, [4])
        #expect(try AtomicFile.removeStaleTemporaries(in: dir.path) == 1)
        #expect(try POSIX.listDirectory(dir.path) == ["keep.txt"])
    }

    @Test func createExclusivelyNeverReplacesAnExistingFile() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("key")
        #expect(try AtomicFile.createExclusively([1, 2, 3], at: path, mode: 0o600))
        #expect(try !AtomicFile.createExclusively([9, 9], at: path, mode: 0o600))
        #expect(try readFile(path) == [1, 2, 3])
        #expect(try POSIX.listDirectory(dir.path) == ["key"])
        let mode = try #require(POSIX.lstatMode(path))
        #expect(mode & 0o777 == 0o600)
    }

    @Test func readRefusesFilesOverTheLimit() throws {
        let dir = TemporaryDirectory()
        try writeFile(dir.file("big"), [UInt8](repeating: 1, count: 100))
        #expect(throws: FileError.tooLarge) { try AtomicFile.read(dir.file("big"), limit: 99) }
        let missing = #expect(throws: FileError.notFound) { try AtomicFile.read(dir.file("nope")) }
        #expect(missing?.errno == ENOENT)
    }
}
