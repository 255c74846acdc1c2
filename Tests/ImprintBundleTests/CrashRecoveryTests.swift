#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import ImprintBundle
import ImprintTestSupport
import ImprintFiles

/// A child process appends to one log and reports "saved N" after each durable append; the
/// test SIGKILLs it at a random moment, hundreds of times in a row on the same log. After
/// every kill the log must open, and every record ever reported saved must be in it, intact
/// and in order. The child writes in 64-byte pieces so kills land inside frames too.
@Suite struct CrashRecoveryTests {
    /// Blocks until a "\n" arrives on `fd` (or end of file); returns what was read.
    func readUntilFirstNewline(_ fd: Int32) -> Data {
        var data = Data()
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 {
            data.append(byte)
            if byte == 0x0A { break }
        }
        return data
    }

    @Test func sigkillAtRandomMomentsNeverLosesASavedRecord() throws {
        let iterations = 250
        let seed = testSeed("crash recovery", fallback: 0x1A2B_3C4D)
        var generator = SplitMix64(seed: seed)
        let dir = TemporaryDirectory("crash")
        var log = dir.file("device.log")
        let lock = dir.file("device.lock")
        var reportedSaved = 0
        var tornTailsSeen = 0
        var totalSaved = 0
        var verified = 0
        var verifiedHashes: [RecordHash] = []
        let started = ContinuousClock.now

        // At least `iterations` kills; under heavy machine load fewer kills land mid-frame, so
        // keep going (bounded) until a few torn tails have been recovered.
        var iteration = 0
        while iteration < iterations
                || (tornTailsSeen < 5 && iteration < 3 * iterations && ContinuousClock.now - started < .seconds(45)) {
            defer { iteration += 1 }
            // A fresh log every 50 kills keeps each reopen cheap; each log still sees 50
            // crash-and-recover rounds.
            if iteration % 50 == 0, iteration > 0 {
                log = dir.file("device-\(iteration / 50).log")
                totalSaved += reportedSaved
                reportedSaved = 0
                verified = 0
                verifiedHashes = []
            }
            let (process, out) = try startHelper(["append-until-killed", log, lock, "t", "64"])
            // One kill in eight lands during startup (opening, recovering the torn tail);
            // the rest land 0-6 ms after the child reported its first save, i.e. mid-saving.
            let duringStartup = Int.random(in: 0..<8, using: &generator) == 0
            let delay = duringStartup
                ? UInt32.random(in: 0..<20_000, using: &generator)
                : UInt32.random(in: 0..<6_000, using: &generator)
            var early = Data()
            if !duringStartup {
                early = readUntilFirstNewline(out.fileHandleForReading.fileDescriptor)
            }
            usleep(delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let lines = completeLines(early + out.fileHandleForReading.readDataToEndOfFile())
            for line in lines {
                if line.hasPrefix("saved "), let n = Int(line.dropFirst(6)) {
                    reportedSaved = max(reportedSaved, n)
                } else {
                    Issue.record("unexpected helper output \"\(line)\" (seed \(seed), iteration \(iteration))")
                }
            }
            let context = "seed \(seed), iteration \(iteration), delay \(delay) us"
            // A kill during startup can come before the child created a fresh log: then it
            // must not have reported anything saved to it.
            guard FileManager.default.fileExists(atPath: log) else {
                #expect(reportedSaved == 0, "no log but \(reportedSaved) records reported saved: \(context)")
                continue
            }
            let contents = try ChangeLogReader.read(at: log)
            if contents.droppedBytes > 0 { tornTailsSeen += 1 }
            try #require(contents.records.count >= reportedSaved, "lost saved records: \(context)")
            // Records before `verified` were checked in an earlier round and frames before the
            // valid end are never rewritten; check the new ones fully and the old ones by hash.
            for index in 0..<contents.records.count {
                let found = contents.records[index]
                let ok = index < verified
                    ? found.hash == verifiedHashes[index]
                    : found == helperRecord(tag: "t", index: index)
                if !ok {
                    Issue.record("record \(index) differs from what was written: \(context)")
                    break
                }
                if index >= verified { verifiedHashes.append(found.hash) }
            }
            verified = max(verified, contents.records.count)
        }
        totalSaved += reportedSaved
        print("crash recovery: \(iteration) kills, \(totalSaved) records reported saved, \(tornTailsSeen) torn tails recovered, \(ContinuousClock.now - started)")
        // The test is only meaningful if kills landed while the child was saving. (Kills
        // inside a frame are made certain by `aDeathInsideAFrameLosesNothingSaved`.)
        #expect(totalSaved > iterations, "seed \(seed)")
    }

    /// Deaths inside a frame by construction: the child writes under a file size limit, and
    /// the kernel kills it (SIGXFSZ) at the write that would pass the byte the test chose
    /// (seeded), so the log always ends in a partial frame there (unless the byte is exactly
    /// a frame boundary). Each time, every record reported saved must be intact, the tail
    /// must read as torn, and the next writer must recover it and go on.
    @Test func aDeathInsideAFrameLosesNothingSaved() throws {
        let seed = testSeed("crash recovery (size limit)", fallback: 0x5A1E_0001)
        var generator = SplitMix64(seed: seed)
        let dir = TemporaryDirectory("crash-limit")
        let log = dir.file("device.log"), lock = dir.file("device.lock")
        var reportedSaved = 0, torn = 0, boundaries = 0
        let rounds = 20
        for round in 0..<rounds {
            let size = (try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0
            let limit = size + Int.random(in: 1...150_000, using: &generator)
            let (process, out) = try startHelper(["append-until-size-limit", log, lock, "t", "64", String(limit)])
            process.waitUntilExit()
            let context = "seed \(seed), round \(round), limit \(limit)"
            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGXFSZ, "\(context): \(process.terminationReason == .exit ? "exit" : "signal") \(process.terminationStatus)")
            for line in completeLines(out.fileHandleForReading.readDataToEndOfFile()) {
                guard line.hasPrefix("saved "), let n = Int(line.dropFirst(6)) else { Issue.record("\(context): \(line)"); continue }
                reportedSaved = max(reportedSaved, n)
            }
            #expect((try FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) == limit, "\(context)")
            let contents = try ChangeLogReader.read(at: log)
            if contents.droppedBytes > 0 { torn += 1 } else { boundaries += 1 }
            try #require(contents.records.count >= reportedSaved, "lost saved records: \(context)")
            for (index, found) in contents.records.enumerated() where found != helperRecord(tag: "t", index: index) {
                Issue.record("record \(index) differs from what was written: \(context)")
                break
            }
        }
        print("crash recovery (size limit): \(rounds) deaths at chosen bytes, \(torn) inside a frame, \(boundaries) on a boundary, \(reportedSaved) records saved")
        #expect(torn >= rounds - 2, "seed \(seed): only \(torn) of \(rounds) deaths left a torn frame")
        #expect(reportedSaved > 0)
    }
}
