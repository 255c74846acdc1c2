#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ImprintKeys
import ImprintTestSupport
import Testing

/// A child process saves group state + cursor pairs in a loop; the test SIGKILLs it at a
/// random moment, again and again on the same store. After every kill the store must open and
/// hold a state and cursor from the same save (never a mix), no older than the last save the
/// child reported done. Where the kill lands is up to the machine; only the outcome is checked.
@Suite struct KeyStoreCrashTests {
    static func state(_ n: UInt64) -> [UInt8] {
        Array("state \(n):".utf8) + [UInt8](repeating: UInt8(truncatingIfNeeded: n % 251), count: 500 + Int((n &* 977) % 20_000))
    }

    func helper() throws -> String {
        try #require(siblingExecutable("imprint-keys-testhelper"), "run `swift build --build-tests` first")
    }

    /// Reads "saved n" lines until `count` arrived (or the pipe closed); returns the last n.
    func readSaves(_ fd: Int32, atLeast count: Int, last: inout UInt64) {
        var line: [UInt8] = []
        var seen = 0
        var byte: UInt8 = 0
        while seen < count, read(fd, &byte, 1) == 1 {
            if byte == 0x0A {
                if let n = UInt64(String(decoding: line.dropFirst(6), as: UTF8.self)) { last = n }
                line = []
                seen += 1
            } else {
                line.append(byte)
            }
        }
    }

    @Test func sigkillDuringSavesLeavesOldOrNewNeverAMix() throws {
        let seed = testSeed("KeyStoreCrashTests", fallback: 0xC2A5_4E5)
        var rng = SplitMix64(seed: seed)
        let dir = TemporaryDirectory("keys-crash")
        let storePath = dir.file("keys.sqlite"), keyPath = dir.file("keys.key")
        let exe = try helper()
        var reported: UInt64 = 0
        for iteration in 0..<40 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: exe)
            process.arguments = ["save-until-killed", storePath, keyPath]
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            // Wait for 1–30 acknowledged saves, then kill at once: the child is mid-save or
            // between saves, wherever the scheduler put it.
            readSaves(out.fileHandleForReading.fileDescriptor, atLeast: Int.random(in: 1...30, using: &rng), last: &reported)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try? out.fileHandleForReading.close()

            let store = try SQLiteKeyStore(path: storePath, unlock: .keyFile(path: keyPath))
            let me = try store.deviceIdentity().did
            let record = try #require(try store.groupState(convo: "crash", for: me), "iteration \(iteration), seed \(seed)")
            #expect(record.state == Self.state(record.cursor.seq), "state and cursor from different saves, iteration \(iteration), seed \(seed)")
            #expect(record.cursor.epoch == record.cursor.seq / 3)
            #expect(record.cursor.seq >= reported, "an acknowledged save was lost, iteration \(iteration), seed \(seed)")
        }
        #expect(reported > 40)
    }
}

/// Several processes opening a store that does not exist yet, at once: key file, master key
/// and device identity are each created exactly once, so every process ends with the same did.
@Suite struct KeyStoreCreationRaceTests {
    @Test func concurrentFirstOpensAgreeOnOneIdentity() throws {
        let exe = try #require(siblingExecutable("imprint-keys-testhelper"), "run `swift build --build-tests` first")
        for round in 0..<3 {
            let dir = TemporaryDirectory("keys-race")
            let runs = try (0..<4).map { _ -> (Process, Pipe) in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: exe)
                process.arguments = ["device-identity", dir.file("keys.sqlite"), dir.file("keys.key")]
                let out = Pipe()
                process.standardOutput = out
                try process.run()
                return (process, out)
            }
            var dids: [String] = []
            for (process, out) in runs {
                let data = out.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                #expect(process.terminationStatus == 0, "round \(round)")
                dids.append(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            }
            #expect(Set(dids).count == 1, "round \(round): \(dids)")
            #expect(dids[0].hasPrefix("did:key:z6Mk"))
        }
    }
}
