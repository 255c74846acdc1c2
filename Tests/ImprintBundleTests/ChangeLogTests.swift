import Foundation
import Testing
@testable import ImprintBundle
import ImprintTestSupport
import ImprintFiles

@Suite struct ChangeLogTests {
    func makeWriter(_ dir: TemporaryDirectory, name: String = "d.log", maxPayload: Int = ChangeLogFormat.defaultMaxPayloadLength) throws -> ChangeLogWriter {
        try ChangeLogWriter(path: dir.file(name), lock: FileLock(path: dir.file(name + ".lock")), maxPayloadLength: maxPayload)
    }

    @Test func appendedRecordsReadBackInOrder() throws {
        let dir = TemporaryDirectory()
        let writer = try makeWriter(dir)
        let records = (0..<20).map { record("change \($0)") } + [record("")]
        for r in records.prefix(10) { try writer.append(r) }
        try writer.append(contentsOf: Array(records.dropFirst(10)))
        let contents = try ChangeLogReader.read(at: dir.file("d.log"))
        #expect(contents.records == records)
        #expect(contents.tail == .clean)
        #expect(contents.droppedBytes == 0)
        #expect(contents.validLength == contents.fileLength)
    }

    @Test func fileStartsWithVersionedHeader() throws {
        let dir = TemporaryDirectory()
        try makeWriter(dir).append(record("x"))
        let bytes = try readFile(dir.file("d.log"))
        #expect(Array(bytes[0..<8]) == Array("IMPRLOG\0".utf8))
        #expect(bytes[8] == 1 && bytes[9] == 0)
        #expect(ChangeLogFormat.readLE32(bytes, at: 12) == CRC32C.checksum(Array(bytes[0..<12])))
        // First frame: length of (kind + hash + "x") = 34, then crc over length ++ payload.
        #expect(ChangeLogFormat.readLE32(bytes, at: 16) == 34)
        #expect(ChangeLogFormat.readLE32(bytes, at: 20) == CRC32C.checksum(Array(bytes[16..<20]) + Array(bytes[24...])))
        #expect(bytes[24] == 1)
    }

    /// Every possible torn tail: truncate a log at each byte offset, read it, then append.
    @Test func everyTruncationPointRecoversTheCompleteFramesAndAcceptsAppends() throws {
        let dir = TemporaryDirectory()
        let records = (0..<4).map { record("record number \($0) " + String(repeating: "z", count: $0 * 7)) }
        let writer = try makeWriter(dir, name: "full.log")
        var frameEnds: [Int] = []
        for r in records {
            try writer.append(r)
            frameEnds.append(Int(try ChangeLogReader.read(at: dir.file("full.log")).fileLength))
        }
        let full = try readFile(dir.file("full.log"))
        for cut in 0...full.count {
            let name = "cut\(cut).log"
            try writeFile(dir.file(name), Array(full[0..<cut]))
            let contents = try ChangeLogReader.read(at: dir.file(name))
            let complete = frameEnds.filter { $0 <= cut }.count
            #expect(contents.records == Array(records.prefix(complete)), "cut at \(cut)")
            #expect(contents.validLength + contents.droppedBytes == Int64(cut))
            if frameEnds.contains(cut) || cut == 0 {
                #expect(contents.tail == .clean, "cut at \(cut)")
            }
            // A writer drops the torn tail and appends after the last complete frame.
            let extra = record("after cut \(cut)")
            let result = try makeWriter(dir, name: name).append(extra)
            #expect(result.truncatedBytes == (cut < 16 ? Int64(cut) : contents.droppedBytes), "cut at \(cut)")
            let reopened = try ChangeLogReader.read(at: dir.file(name))
            #expect(reopened.records == Array(records.prefix(complete)) + [extra], "cut at \(cut)")
            #expect(reopened.tail == .clean)
        }
    }

    @Test func aCorruptedByteCostsOnlyItsOwnFrameAndNeverAltersARecord() throws {
        let dir = TemporaryDirectory()
        let records = (0..<4).map { record("payload \($0) " + String(repeating: "x", count: 30)) }
        let writer = try makeWriter(dir)
        var frameEnds: [Int] = []
        for r in records {
            try writer.append(r)
            frameEnds.append(Int(try ChangeLogReader.read(at: dir.file("d.log")).fileLength))
        }
        let full = try readFile(dir.file("d.log"))
        for position in ChangeLogFormat.headerLength..<full.count {
            var damaged = full
            damaged[position] ^= 0x5A
            try writeFile(dir.file("damaged.log"), damaged)
            let contents = try ChangeLogReader.read(at: dir.file("damaged.log"))
            let hit = frameEnds.firstIndex { position < $0 }!
            var expected = records
            expected.remove(at: hit)
            #expect(contents.records == expected, "byte \(position)")
            if hit == records.count - 1 {
                // Nothing valid follows: a tail (torn, or damaged: a writer may truncate it).
                #expect(contents.tail != .clean && contents.damage.isEmpty, "byte \(position)")
            } else {
                // Valid frames follow: damage, which no writer may truncate.
                #expect(contents.tail == .clean, "byte \(position)")
                #expect(contents.damage.map(\.range) == [Int64(hit == 0 ? ChangeLogFormat.headerLength : frameEnds[hit - 1])..<Int64(frameEnds[hit])], "byte \(position)")
            }
        }
    }

    @Test func anAppendAfterDamageQuarantinesInsteadOfTruncating() throws {
        // One flipped bit in frame 5 of a 40-frame log, then an append: the 39 intact frames
        // stay, the damaged file is kept whole under a quarantine name.
        let dir = TemporaryDirectory()
        let records = (0..<40).map { record("edit \($0) " + String(repeating: "y", count: 100)) }
        try makeWriter(dir).append(contentsOf: records)
        var bytes = try readFile(dir.file("d.log"))
        let frameLength = (bytes.count - ChangeLogFormat.headerLength) / 40
        bytes[ChangeLogFormat.headerLength + 5 * frameLength + 50] ^= 0x08
        try writeFile(dir.file("d.log"), bytes)

        let writer = try makeWriter(dir)
        let result = try writer.append(record("after the damage"))
        let quarantined = try #require(result.quarantined)
        #expect(try readFile(quarantined) == bytes, "the damaged file is kept whole")
        #expect(BundleLayout.role(ofName: POSIX.lastComponent(of: quarantined), fileExtension: "log") == .ignored)
        let contents = try ChangeLogReader.read(at: dir.file("d.log"))
        var expected = records
        expected.remove(at: 5)
        #expect(contents.records == expected + [record("after the damage")])
        #expect(contents.damage.isEmpty && contents.tail == .clean)

        // Compaction of a damaged log quarantines too, and keeps every intact record.
        try writeFile(dir.file("d.log"), bytes)
        let removed = try makeWriter(dir).rewrite { $0 != records[0] }
        #expect(removed == 1)
        #expect(try ChangeLogReader.read(at: dir.file("d.log")).records == Array(expected.dropFirst()))
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter(BundleLayout.isQuarantineName)
        #expect(names.count == 2)
    }

    @Test func hugeFrameLengthIsAStopNotAnAllocation() throws {
        let dir = TemporaryDirectory()
        var bytes = ChangeLogFormat.header()
        ChangeLogFormat.appendLE(UInt32(0xFFFF_FFF0), to: &bytes)
        ChangeLogFormat.appendLE(UInt32(0), to: &bytes)
        bytes += [1, 2, 3]
        try writeFile(dir.file("huge.log"), bytes)
        let contents = try ChangeLogReader.read(at: dir.file("huge.log"))
        #expect(contents.records.isEmpty)
        #expect(contents.tail == .payloadTooLarge(0xFFFF_FFF0))
        #expect(contents.validLength == 16)

        // Within the limit but past the end of the file: a torn frame.
        var short = ChangeLogFormat.header()
        ChangeLogFormat.appendLE(UInt32(1000), to: &short)
        ChangeLogFormat.appendLE(UInt32(0), to: &short)
        short += [UInt8](repeating: 7, count: 10)
        try writeFile(dir.file("short.log"), short)
        #expect(try ChangeLogReader.read(at: dir.file("short.log")).tail == .truncatedFrame)
    }

    @Test func notALogAndNewerVersionsAreTypedErrors() throws {
        let dir = TemporaryDirectory()
        try writeFile(dir.file("garbage.log"), Array("this is not a change log at all".utf8))
        let garbage = #expect(throws: BundleError.self) { try ChangeLogReader.read(at: dir.file("garbage.log")) }
        #expect(garbage?.code == .corrupt)

        var header = ChangeLogFormat.magic
        ChangeLogFormat.appendLE(UInt16(2), to: &header)
        ChangeLogFormat.appendLE(UInt16(0), to: &header)
        ChangeLogFormat.appendLE(CRC32C.checksum(header), to: &header)
        try writeFile(dir.file("v2.log"), header)
        let newer = #expect(throws: BundleError.self) { try ChangeLogReader.read(at: dir.file("v2.log")) }
        #expect(newer?.code == .unsupportedVersion)
        // A writer refuses it too rather than appending v1 frames to a v2 log.
        let writerError = #expect(throws: BundleError.self) { try makeWriter(dir, name: "v2.log").append(record("x")) }
        #expect(writerError?.code == .unsupportedVersion)

        // Short file that is not a header prefix.
        try writeFile(dir.file("tiny.log"), [0x00, 0x01])
        #expect(throws: BundleError.self) { try ChangeLogReader.read(at: dir.file("tiny.log")) }
        // Header prefix (crash while creating): empty log, torn header.
        try writeFile(dir.file("prefix.log"), Array(ChangeLogFormat.header()[0..<5]))
        #expect(try ChangeLogReader.read(at: dir.file("prefix.log")).tail == .truncatedHeader)
    }

    @Test func randomGarbageAfterTheHeaderNeverCrashes() throws {
        let dir = TemporaryDirectory()
        let seed = testSeed("log garbage fuzz", fallback: 20261121)
        var generator = SplitMix64(seed: seed)
        for iteration in 0..<300 {
            var bytes = ChangeLogFormat.header()
            if iteration % 3 == 0 {
                bytes += ChangeLogFormat.frame(ChangeLogFormat.changePayload(record("ok \(iteration)")))
            }
            let count = Int.random(in: 0..<200, using: &generator)
            bytes += (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try writeFile(dir.file("fuzz.log"), bytes)
            let contents = try ChangeLogReader.read(at: dir.file("fuzz.log"))
            #expect(contents.validLength <= contents.fileLength, "seed \(seed) iteration \(iteration)")
            if iteration % 3 == 0 {
                #expect(contents.records.first == record("ok \(iteration)"), "seed \(seed) iteration \(iteration)")
            }
        }
    }

    @Test func unknownPayloadKindsAreSkipped() throws {
        let dir = TemporaryDirectory()
        var bytes = ChangeLogFormat.header()
        bytes += ChangeLogFormat.frame([0x7F, 1, 2, 3])
        bytes += ChangeLogFormat.frame(ChangeLogFormat.changePayload(record("known")))
        try writeFile(dir.file("mixed.log"), bytes)
        let contents = try ChangeLogReader.read(at: dir.file("mixed.log"))
        #expect(contents.records == [record("known")])
        #expect(contents.skippedFrames == 1)
        #expect(contents.tail == .clean)
        // A change frame too short to hold a hash (valid checksum) stops the reader.
        try writeFile(dir.file("short-change.log"), ChangeLogFormat.header() + ChangeLogFormat.frame([1, 2, 3]))
        #expect(try ChangeLogReader.read(at: dir.file("short-change.log")).tail == .malformedPayload)
    }

    @Test func oversizedRecordIsRefusedAndNothingIsWritten() throws {
        let dir = TemporaryDirectory()
        let writer = try makeWriter(dir, maxPayload: 100)
        try writer.append(record("small"))
        let big = record(String(repeating: "b", count: 200))
        let error = #expect(throws: BundleError.self) { try writer.append(contentsOf: [record("ok"), big]) }
        #expect(error?.code == .tooLarge)
        #expect(try ChangeLogReader.read(at: dir.file("d.log")).records == [record("small")])
    }

    @Test func rewriteReplacesTheLogAndOtherWritersFollowTheNewFile() throws {
        let dir = TemporaryDirectory()
        let first = try makeWriter(dir)
        let second = try makeWriter(dir)
        let records = (0..<6).map { record("r\($0)") }
        try first.append(contentsOf: records)
        let removed = try first.rewrite { $0.bytes.last! % 2 == 0 } // keeps r0, r2, r4
        #expect(removed == 3)
        try second.append(record("after rewrite"))
        try first.append(record("and again"))
        let contents = try ChangeLogReader.read(at: dir.file("d.log"))
        #expect(contents.records == [records[0], records[2], records[4], record("after rewrite"), record("and again")])
        #expect(contents.tail == .clean)
    }

    @Test func twoWritersInOneProcessInterleaveWholeFrames() async throws {
        let dir = TemporaryDirectory()
        let a = try makeWriter(dir)
        let b = try makeWriter(dir)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (writer, tag) in [(a, "a"), (b, "b")] {
                group.addTask {
                    for i in 0..<100 { try writer.append(record("\(tag)\(i)")) }
                }
            }
            try await group.waitForAll()
        }
        let contents = try ChangeLogReader.read(at: dir.file("d.log"))
        #expect(contents.tail == .clean)
        #expect(contents.records.count == 200)
        for tag in ["a", "b"] {
            let mine = contents.records.filter { $0.bytes.first == UInt8(ascii: tag == "a" ? "a" : "b") }
            #expect(mine == (0..<100).map { record("\(tag)\($0)") })
        }
    }
}
