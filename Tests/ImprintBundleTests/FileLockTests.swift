#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import ImprintBundle
import ImprintFiles
import ImprintTestSupport

@Suite struct FileLockTests {
    @Test func secondAcquirerWaitsAndTimesOut() throws {
        let dir = TemporaryDirectory("lock")
        let lock = FileLock(path: dir.file("locks/x.lock"), timeout: .milliseconds(100))
        let held = try lock.acquire()
        #expect(try lock.isHeldElsewhere())
        let clock = ContinuousClock()
        let start = clock.now
        #expect(throws: FileError.lockTimeout) { try lock.acquire() }
        #expect(clock.now - start >= .milliseconds(100))
        held.release()
        #expect(try !lock.isHeldElsewhere())
        try lock.withLock { }
    }

    @Test func lockHeldByAnotherProcessBlocksUntilThatProcessIsKilled() throws {
        let dir = TemporaryDirectory("lock")
        let lockPath = dir.file("d.lock")
        let (process, out) = try startHelper(["hold-lock", lockPath])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        // Wait for "locked".
        var line = Data()
        var byte: UInt8 = 0
        while read(out.fileHandleForReading.fileDescriptor, &byte, 1) == 1, byte != 0x0A { line.append(byte) }
        try #require(String(decoding: line, as: UTF8.self) == "locked")
        let lock = FileLock(path: lockPath, timeout: .milliseconds(200))
        #expect(try lock.isHeldElsewhere())
        #expect(throws: FileError.lockTimeout) { try lock.withLock { } }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        // The kernel released the dead holder's lock.
        try FileLock(path: lockPath, timeout: .seconds(2)).withLock { }
    }

    /// Three processes append to one log at once, each in small pieces per write(2) call.
    /// Without the lock their pieces would interleave and corrupt frames. The writers go in
    /// step (`hammer-in-step`: record i of each only once all have written record i - 1), so
    /// every record is attempted together with the other two writers' and the log's writer
    /// changes at every record by construction, whatever the scheduler does.
    @Test func concurrentProcessesNeverInterleaveFrames() throws {
        let dir = TemporaryDirectory("lock")
        let log = dir.file("shared.log")
        let lock = dir.file("shared.lock")
        let progress = dir.file("progress")
        try FileManager.default.createDirectory(atPath: progress, withIntermediateDirectories: true)
        let tags = ["p", "q", "r"]
        let count = 120
        for tag in tags { try writeFile(progress + "/" + tag, Array("0\n".utf8)) }
        let children = try tags.map { try startHelper(["hammer-in-step", log, lock, $0, String(count), "1024", progress, String(tags.count)]) }
        for (process, out) in children {
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            #expect(completeLines(out.fileHandleForReading.readDataToEndOfFile()) == ["done \(count)"])
        }
        let contents = try ChangeLogReader.read(at: log)
        #expect(contents.tail == .clean)
        #expect(contents.droppedBytes == 0)
        #expect(contents.records.count == tags.count * count)
        for tag in tags {
            let mine = contents.records.filter { $0.bytes.starts(with: Array("\(tag):".utf8)) }
            // Compare hashes (record bytes would flood the failure message).
            #expect(mine.map(\.hash) == (0..<count).map { helperRecord(tag: tag, index: $0).hash }, "records of \(tag)")
            #expect(mine.allSatisfy { ChangeHashCheck.matches($0) }, "records of \(tag) whose bytes do not hash to their hash")
        }
        // In step, each round of three holds one record of each writer.
        for (round, records) in stride(from: 0, to: contents.records.count, by: 3).map({ ($0 / 3, contents.records[$0..<$0 + 3]) }) {
            #expect(Set(records.map { $0.bytes[0] }) == Set(tags.map { $0.utf8.first! }), "round \(round)")
        }
    }

    /// One process appends while another (same device, e.g. `imprint watch`) keeps compacting
    /// the log into a snapshot and rewriting it. The appender must follow each rewritten file,
    /// and every record must end up in the log or the snapshot.
    @Test func appendsSurviveConcurrentCompactionByAnotherProcess() throws {
        let dir = TemporaryDirectory("compact")
        let log = dir.file("d.log"), lock = dir.file("d.lock"), snapshot = dir.file("d.snapshot")
        let stop = dir.file("stop"), progress = dir.file("compactions")
        let count = 200, rounds = 4
        let compactor = try startHelper(["compact-loop", log, lock, snapshot, stop, progress])
        // The appender waits for a compaction after each quarter of its records, so the log
        // is rewritten under it at least `rounds` times by construction.
        let appender = try startHelper(["append-between-compactions", log, lock, "c", String(count), "4096", progress, String(rounds)])
        appender.0.waitUntilExit()
        #expect(appender.0.terminationStatus == 0)
        try writeFile(stop, [])
        compactor.0.waitUntilExit()
        #expect(compactor.0.terminationStatus == 0)
        let summary = completeLines(compactor.1.fileHandleForReading.readDataToEndOfFile())
        let compactions = summary.first.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        print("compaction race: \(compactions) compactions while appending \(count) records")
        #expect(compactions >= rounds, "the compactor ran \(compactions) times")

        let contents = try ChangeLogReader.read(at: log)
        #expect(contents.tail == .clean)
        let folded = try SnapshotFile.read(at: snapshot)
        let present = Set(contents.records.map(\.hash)).union(folded.coveredChanges)
        let expected = (0..<count).map { helperRecord(tag: "c", index: $0).hash }
        let missing = expected.filter { !present.contains($0) }.count
        #expect(missing == 0, "\(missing) of \(count) records are in neither the log nor the snapshot")
        #expect(contents.records.allSatisfy { ChangeHashCheck.matches($0) })
    }
}
