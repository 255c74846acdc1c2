import Foundation
import ImprintBundle
import ImprintCRDT
import Testing
@testable import ImprintStore
import ImprintTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A sync tool that delivers another machine's copy of a bundle slowly, in pieces, in the
/// manner of a real tool, while this machine edits, syncs at random moments and runs
/// `imprint watch`. At the end every edit of both machines is in the text, every copy is
/// gone, and no copy was removed while the tool was still writing it.
///
/// Seeded: `IMPRINT_TEST_SEED` replays one run; `IMPRINT_SLOW_COPIER_RUNS` (default 1) runs
/// that many seeds per style.
@Suite struct SlowCopierTests {
    /// How a tool writes the files of a copy.
    enum Style: String, CaseIterable, Sendable {
        /// Syncthing: each file into `.syncthing.NAME.tmp` in pieces, then renamed; file-level
        /// conflict copies (`NAME.sync-conflict-…`).
        case syncthing
        /// Dropbox: each file assembled in `.dropbox.cache` outside the bundle, then moved in;
        /// folders before files; file-level conflicted copies.
        case dropbox
        /// iCloud Drive: a duplicate bundle (`paper 2.imprint`) of placeholders
        /// (`.NAME.icloud`) first, then each file downloaded and the placeholder removed.
        case iCloud
        /// NFS, rsync --inplace, cp: a duplicate bundle written under the final names from the
        /// first byte, several files at once, and the other machine's canonical log rewritten
        /// in place.
        case inPlace
    }

    /// One step of the copier.
    enum Step {
        case makeDirectory(String)
        case append(String, [UInt8])
        case rename(String, String)
        case remove(String)
    }

    /// Settle period of this machine's syncs and of the watcher: far above the copier's
    /// pauses (a few ms), so a removal while the copier writes is a defect, not bad luck.
    static let settle = SettlePolicy(quietPeriod: .seconds(2))

    static var runs: Int {
        ProcessInfo.processInfo.environment["IMPRINT_SLOW_COPIER_RUNS"].flatMap(Int.init) ?? 1
    }

    static let cases: [(Style, Int)] = Style.allCases.flatMap { style in (0..<runs).map { (style, $0) } }

    @Test(arguments: cases)
    func everyEditSurvivesASlowCopier(style: Style, run: Int) throws {
        let base = testSeed("SlowCopierTests.\(style.rawValue)", fallback: 0x51_0C0 &+ UInt64(Style.allCases.firstIndex(of: style)!))
        let seed = base &+ UInt64(run) &* 0x9E37_79B9
        var rng = SplitMix64(seed: seed)
        let temp = TemporaryDirectory("slow-copier")
        let laptop = try DeviceID("laptop"), phone = try DeviceID("phone")
        try FileManager.default.createDirectory(atPath: temp.file("laptop"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: temp.file("phone"), withIntermediateDirectories: true)
        let laptopPath = temp.file("laptop/paper.imprint"), phonePath = temp.file("phone/paper.imprint")

        // Both machines start from one copy, then edit apart.
        var tokens: [String] = []
        let origin = try DocumentBundle.create(at: laptopPath, device: laptop, title: "Paper")
        try origin.insert("start ", at: 0)
        try FileManager.default.copyItem(atPath: laptopPath, toPath: phonePath)
        for i in 0..<Int.random(in: 4...12, using: &rng) {
            let doc = try DocumentBundle.open(at: laptopPath, device: laptop)
            let token = "L\(i) "
            try doc.insert(token, at: Self.wordBoundary(in: try doc.text(), rng: &rng))
            tokens.append(token)
            if i == 2 { try doc.sync(compact: true, settle: .immediate) } // a snapshot to copy too
        }

        // The phone had synced before (its own files hold the shared start).
        try DocumentBundle.open(at: phonePath, device: phone).sync(settle: .immediate)

        // The copier's plan, and this machine's watcher.
        let steps = Self.plan(style, from: laptopPath, into: phonePath, rng: &rng)
        let watchLog = temp.file("watch.stderr")
        let watcher = try startWatch(phonePath, device: "phone-watch", stderr: watchLog)
        // SIGKILL: the test runner's children may inherit an ignored SIGTERM, and a watcher
        // killed at any point must leave the bundle intact anyway.
        defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) }; watcher.waitUntilExit() }

        let started = Date()
        var written: [String: Int] = [:]  // copy file → bytes the copier has put there
        var earlyRemovals: [String] = []
        var phoneEdits = 0
        let duplicate = temp.file("phone/paper 2.imprint")
        var duplicateStarted = false
        for step in steps {
            // A duplicate folder the copier is still filling must not vanish under it.
            if duplicateStarted, !FileManager.default.fileExists(atPath: duplicate) { earlyRemovals.append(duplicate) }
            switch step {
            case .makeDirectory(let path):
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                if path == duplicate { duplicateStarted = true }
            case .append(let path, let bytes):
                if let before = written[path], FileStamp.take(path)?.size != Int64(before) {
                    earlyRemovals.append(path) // removed (or cut) while the copier was still writing it
                    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                }
                let handle: FileHandle
                if let h = FileHandle(forWritingAtPath: path) { handle = h } else {
                    _ = FileManager.default.createFile(atPath: path, contents: nil)
                    handle = try #require(FileHandle(forWritingAtPath: path))
                }
                try handle.seekToEnd()
                try handle.write(contentsOf: Data(bytes))
                try handle.close()
                written[path, default: 0] += bytes.count
            case .rename(let from, let to):
                if FileManager.default.fileExists(atPath: to) { try FileManager.default.removeItem(atPath: to) }
                try FileManager.default.moveItem(atPath: from, toPath: to)
                written[to] = written.removeValue(forKey: from)
            case .remove(let path):
                try FileManager.default.removeItem(atPath: path)
            }
            // This machine, meanwhile: edits and syncs at random moments.
            switch Int.random(in: 0..<10, using: &rng) {
            case 0:
                let doc = try DocumentBundle.open(at: phonePath, device: phone)
                let token = "P\(phoneEdits) "
                phoneEdits += 1
                try doc.insert(token, at: Self.wordBoundary(in: try doc.text(), rng: &rng))
                tokens.append(token)
            case 1, 2:
                try DocumentBundle.open(at: phonePath, device: phone).sync(settle: Self.settle)
            default:
                break
            }
            Thread.sleep(forTimeInterval: Double(Int.random(in: 0...6, using: &rng)) / 1000)
        }

        // The copier is done: once everything has settled, one more sync removes every copy.
        let copierDone = Date()
        Thread.sleep(forTimeInterval: 2.3)
        let doc = try DocumentBundle.open(at: phonePath, device: phone)
        let report = try doc.sync(settle: Self.settle)
        let text = try doc.text()
        kill(watcher.processIdentifier, SIGKILL)
        watcher.waitUntilExit()
        let watchErrors = ((try? String(contentsOfFile: watchLog, encoding: .utf8)) ?? "")
            .split(separator: "\n").filter { $0.hasPrefix("error:") }

        print("SlowCopierTests.\(style.rawValue) run \(run): \(steps.count) copier steps, \(phoneEdits) phone edits, copier took \(String(format: "%.1f", copierDone.timeIntervalSince(started))) s")
        let context = "style \(style.rawValue), seed \(seed) (IMPRINT_TEST_SEED=\(base)), kept \(report.kept), text \(text)"
        #expect(earlyRemovals.isEmpty, "removed while still being written: \(earlyRemovals); \(context)")
        for token in tokens { #expect(text.contains(token), "lost \(token): \(context)") }
        let laptopChanges = try DocumentBundle.open(at: laptopPath, device: laptop).document.allChanges().map(\.hash)
        let phoneChanges = Set(doc.document.allChanges().map(\.hash))
        #expect(laptopChanges.allSatisfy(phoneChanges.contains), "\(context)")
        #expect(report.kept.isEmpty, "\(context)")
        let siblings = try FileManager.default.contentsOfDirectory(atPath: temp.file("phone"))
        #expect(siblings.filter { $0.hasSuffix(".imprint") } == ["paper.imprint"], "\(siblings); \(context)")
        let inventory = try BundleLayout(root: phonePath).inventory()
        #expect(inventory.changeLogs.allSatisfy { $0.conflictCopy == nil } && inventory.metadataConflictCopies.isEmpty, "\(context)")
        #expect(watchErrors.isEmpty, "watch: \(watchErrors); \(context)")
        // A fresh open from the bundle's own files alone sees everything.
        let reopened = try DocumentBundle.open(at: phonePath, device: try DeviceID("tablet"))
        #expect(try reopened.text() == text, "\(context)")
    }

    /// A position at the start of the text or just after a space, so that no edit splits
    /// another's token and each can be found whole in the merged text.
    static func wordBoundary(in text: String, rng: inout SplitMix64) -> Int {
        var boundaries = [0]
        for (i, scalar) in text.unicodeScalars.enumerated() where scalar == " " { boundaries.append(i + 1) }
        return boundaries.randomElement(using: &rng)!
    }

    // MARK: The copier's plan

    /// The files of `source` a tool would carry, as (path relative to the bundle, bytes).
    static func files(of source: String) -> [(String, [UInt8])] {
        regularFiles(under: source).filter { !$0.hasPrefix("locks/") }.map { relative in
            (relative, [UInt8](FileManager.default.contents(atPath: source + "/" + relative)!))
        }
    }

    /// Pieces of 1 to 200 bytes.
    static func pieces(_ bytes: [UInt8], rng: inout SplitMix64) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var offset = 0
        repeat {
            let n = min(bytes.count - offset, Int.random(in: 1...200, using: &rng))
            result.append(Array(bytes[offset..<offset + n]))
            offset += n
        } while offset < bytes.count
        return result
    }

    static func plan(_ style: Style, from source: String, into bundle: String, rng: inout SplitMix64) -> [Step] {
        let parent = (bundle as NSString).deletingLastPathComponent
        let sourceFiles = files(of: source)
        var steps: [Step] = []
        switch style {
        case .syncthing, .dropbox:
            // File-level conflict copies of the other machine's log, snapshot and metadata.
            let stamp = style == .syncthing ? ".sync-conflict-20261123-101010-ABCDEFG" : " (laptop's conflicted copy 2026-11-23)"
            let staging = parent + "/.dropbox.cache"
            if style == .dropbox { steps.append(.makeDirectory(staging)) }
            for (relative, bytes) in sourceFiles.shuffled(using: &rng) where relative != "changes/phone.log" {
                let directory = (relative as NSString).deletingLastPathComponent
                let name = (relative as NSString).lastPathComponent
                let ext = (name as NSString).pathExtension
                let copyName = (name as NSString).deletingPathExtension + stamp + "." + ext
                let target = bundle + "/" + (directory.isEmpty ? "" : directory + "/") + copyName
                let temporary = style == .syncthing
                    ? bundle + "/" + (directory.isEmpty ? "" : directory + "/") + ".syncthing." + copyName + ".tmp"
                    : staging + "/" + copyName
                steps.append(.makeDirectory((target as NSString).deletingLastPathComponent))
                steps += pieces(bytes, rng: &rng).map { .append(temporary, $0) }
                steps.append(.rename(temporary, target))
            }
        case .iCloud:
            let copy = parent + "/paper 2.imprint"
            steps.append(.makeDirectory(copy))
            for (relative, _) in sourceFiles {
                let directory = (relative as NSString).deletingLastPathComponent
                steps.append(.makeDirectory(copy + (directory.isEmpty ? "" : "/" + directory)))
                steps.append(.append(copy + "/" + placeholderName(relative), [0x62, 0x70, 0x6C, 0x69, 0x73, 0x74]))
            }
            for (relative, bytes) in sourceFiles.shuffled(using: &rng) {
                let download = copy + "/" + relative + ".download"
                steps += pieces(bytes, rng: &rng).map { .append(download, $0) }
                steps.append(.rename(download, copy + "/" + relative))
                steps.append(.remove(copy + "/" + placeholderName(relative)))
            }
        case .inPlace:
            let copy = parent + "/paper 2.imprint"
            steps.append(.makeDirectory(copy))
            var queues: [[Step]] = sourceFiles.shuffled(using: &rng).map { relative, bytes in
                [.makeDirectory((copy + "/" + relative as NSString).deletingLastPathComponent)]
                    + pieces(bytes, rng: &rng).map { .append(copy + "/" + relative, $0) }
            }
            // The other machine's canonical log, rewritten in place from the first byte.
            if let log = sourceFiles.first(where: { $0.0 == "changes/laptop.log" }) {
                let canonical = bundle + "/changes/laptop.log"
                queues.append([.remove(canonical)] + pieces(log.1, rng: &rng).map { .append(canonical, $0) })
            }
            // Several files at once, interleaved.
            while !queues.isEmpty {
                let i = Int.random(in: 0..<queues.count, using: &rng)
                steps.append(queues[i].removeFirst())
                if queues[i].isEmpty { queues.remove(at: i) }
            }
        }
        return steps
    }

    /// iCloud Drive's placeholder of `relative`: `.NAME.icloud` beside it.
    static func placeholderName(_ relative: String) -> String {
        let directory = (relative as NSString).deletingLastPathComponent
        let name = (relative as NSString).lastPathComponent
        return (directory.isEmpty ? "" : directory + "/") + "." + name + ".icloud"
    }

    /// `imprint watch` on `bundle`, as this machine would run it.
    func startWatch(_ bundle: String, device: String, stderr: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(CLITests.binary))
        process.arguments = ["watch", bundle, "--device", device, "--poll", "0.1", "--settle", "2", "--timeout", "120"]
        process.standardOutput = FileHandle.nullDevice
        try #require(FileManager.default.createFile(atPath: stderr, contents: nil))
        process.standardError = FileHandle(forWritingAtPath: stderr)
        try process.run()
        return process
    }
}
