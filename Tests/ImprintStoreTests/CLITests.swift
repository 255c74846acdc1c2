import Crypto
import Foundation
import ImprintEncoding
import Testing
import ImprintTestSupport

/// Runs the built `imprint` binary as scripts and users do (contracts/cli.md).
@Suite struct CLITests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The `imprint` executable: next to the test bundle, else in .build/debug.
    static let binary: String? = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imprint").path
        let candidates = [beside, repositoryRoot + "/.build/debug/imprint"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    @discardableResult
    static func imprint(_ arguments: [String], device: String = "laptop", in directory: String) async throws -> Run {
        guard let binary else {
            Issue.record("imprint binary not built (swift build --product imprint)")
            return Run(status: -1, stdout: "", stderr: "")
        }
        let run = try await ChildProcess.run(binary, arguments, environment: ["IMPRINT_DEVICE": device], directory: directory)
        return Run(status: run.status, stdout: run.stdoutText, stderr: run.stderrText)
    }

    func jsonObject(_ text: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(value as? [String: Any])
    }

    @Test func newEditTextLogSyncAcrossTwoDevices() async throws {
        let dir = TemporaryDirectory("cli")
        let p = dir.path
        #expect(try await Self.imprint(["new", "notes.imprint", "--title", "Notes"], in: p).status == 0)
        #expect(try await Self.imprint(["edit", "notes.imprint", "--insert", "0", "Hello world"], in: p).status == 0)
        #expect(try await Self.imprint(["edit", "notes.imprint", "--delete", "5", "6"], in: p).status == 0)
        #expect(try await Self.imprint(["edit", "notes.imprint", "--insert", "5", ", phone", "--message", "from phone"], device: "phone", in: p).status == 0)
        #expect(try await Self.imprint(["edit", "notes.imprint", "--set", "status=draft"], device: "phone", in: p).status == 0)
        let text = try await Self.imprint(["text", "notes.imprint"], in: p)
        #expect(text.status == 0)
        #expect(text.stdout == "Hello, phone")

        try "Hello there, phone!".write(toFile: dir.file("new.txt"), atomically: true, encoding: .utf8)
        #expect(try await Self.imprint(["edit", "notes.imprint", "--replace-with", "new.txt"], in: p).status == 0)
        #expect(try await Self.imprint(["text", "notes.imprint"], in: p).stdout == "Hello there, phone!")

        let show = try jsonObject(try await Self.imprint(["show", "notes.imprint", "--json"], in: p).stdout)
        #expect(show["body"] as? String == "Hello there, phone!")
        #expect(show["status"] as? String == "draft")
        #expect(show["title"] as? String == "Notes")

        let log = try await Self.imprint(["log", "notes.imprint", "--json"], in: p)
        #expect(log.status == 0)
        let changes = try #require(try jsonObject(log.stdout)["changes"] as? [[String: Any]])
        #expect(changes.count == 6)
        #expect(Set(changes.compactMap { $0["device"] as? String }) == ["laptop", "phone"])
        #expect(changes.contains { $0["message"] as? String == "from phone" })
        #expect(changes.allSatisfy { ($0["hash"] as? String)?.count == 64 && $0["seq"] is NSNumber && $0["time"] is NSNumber })
        #expect(try await Self.imprint(["log", "notes.imprint"], in: p).stdout.split(separator: "\n").count == 6)

        // A conflict copy of laptop's log, as Dropbox would leave it, is merged then tidied.
        try FileManager.default.copyItem(atPath: dir.file("notes.imprint/changes/phone.log"),
                                         toPath: dir.file("notes.imprint/changes/phone (laptop's conflicted copy 2026-11-21).log"))
        let sync = try await Self.imprint(["sync", "notes.imprint", "--json", "--settle", "0"], in: p)
        #expect(sync.status == 0)
        let removed = try #require(try jsonObject(sync.stdout)["removed"] as? [String])
        #expect(removed.count == 1)
        #expect(try await Self.imprint(["text", "notes.imprint"], device: "tablet", in: p).stdout == "Hello there, phone!")
    }

    @Test func mergeArchiveAndAssets() async throws {
        let dir = TemporaryDirectory("cli")
        let p = dir.path
        #expect(try await Self.imprint(["new", "a.imprint"], in: p).status == 0)
        #expect(try await Self.imprint(["archive", "a.imprint", "-o", "a.tar.zst"], in: p).status == 0)
        #expect(try await Self.imprint(["unarchive", "a.tar.zst", "-o", "b.imprint"], in: p).status == 0)
        #expect(try await Self.imprint(["edit", "a.imprint", "--insert", "0", "from a. "], in: p).status == 0)
        #expect(try await Self.imprint(["edit", "b.imprint", "--insert", "0", "from b."], device: "desk", in: p).status == 0)
        #expect(try await Self.imprint(["merge", "a.imprint", "b.imprint"], in: p).status == 0)
        #expect(try await Self.imprint(["merge", "b.imprint", "a.imprint"], device: "desk", in: p).status == 0)
        let a = try await Self.imprint(["text", "a.imprint"], in: p).stdout
        #expect(a.contains("from a. ") && a.contains("from b."))
        #expect(try await Self.imprint(["text", "b.imprint"], in: p).stdout == a)

        try Data("attachment bytes".utf8).write(to: URL(fileURLWithPath: dir.file("pic.bin")))
        let added = try await Self.imprint(["asset", "add", "a.imprint", "pic.bin"], in: p)
        #expect(added.status == 0)
        let id = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id.count == 64)
        #expect(try await Self.imprint(["asset", "list", "a.imprint"], in: p).stdout == "\(id) 16 pic.bin\n")
        #expect(try await Self.imprint(["show", "a.imprint", "--json"], in: p).stdout.contains("\"asset:\(id)\":\"pic.bin\""))
        #expect(try await Self.imprint(["asset", "get", "a.imprint", id, "-o", "out.bin"], in: p).status == 0)
        #expect(FileManager.default.contents(atPath: dir.file("out.bin")) == Data("attachment bytes".utf8))
        #expect(try await Self.imprint(["asset", "rm", "a.imprint", id], in: p).status == 0)
        #expect(try await Self.imprint(["asset", "list", "a.imprint"], in: p).stdout.isEmpty)
    }

    @Test func exitStatusesAndOneLineErrors() async throws {
        let dir = TemporaryDirectory("cli")
        let p = dir.path
        #expect(try await Self.imprint(["new", "d.imprint"], in: p).status == 0)
        for arguments in [["edit", "d.imprint", "--insert", "5", "x"], ["text", "missing.imprint"],
                          ["edit", "d.imprint"], ["no-such-command"], ["new", "d.imprint"], ["new", "plain-dir"]] {
            let run = try await Self.imprint(arguments, in: p)
            #expect(run.status == 1, "\(arguments)")
            #expect(run.stderr.hasPrefix("error: ") && run.stderr.filter { $0 == "\n" }.count == 1, "\(arguments): \(run.stderr)")
        }

        // A change record that is not an engine change: hostile data, exit 2.
        #expect(try await Self.imprint(["new", "bad.imprint"], in: p).status == 0)
        var log = try Data(contentsOf: URL(fileURLWithPath: dir.file("bad.imprint/changes/laptop.log")))
        log.replaceSubrange(0..<8, with: Data("NOTALOG!".utf8))
        try log.write(to: URL(fileURLWithPath: dir.file("bad.imprint/changes/laptop.log")))
        let corruptLog = try await Self.imprint(["text", "bad.imprint"], in: p)
        #expect(corruptLog.status == 2)
        #expect(corruptLog.stderr.hasPrefix("error: "))

        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: dir.file("d.imprint/metadata.json")))
        for command in ["text", "log", "sync", "show"] {
            let run = try await Self.imprint([command, "d.imprint"], in: p)
            #expect(run.status == 2, "\(command)")
            #expect(run.stderr.hasPrefix("error: ") && run.stderr.filter { $0 == "\n" }.count == 1)
        }
        try Data("not an archive at all".utf8).write(to: URL(fileURLWithPath: dir.file("junk.tar")))
        #expect(try await Self.imprint(["unarchive", "junk.tar", "-o", "x.imprint"], in: p).status == 2)
    }

    /// Whether the edit lands before `watch` took its first look or after, `watch` merges it
    /// and prints one line (at its first pass, or when the directory event wakes it): the test
    /// waits for that line, not for a time, then stops `watch` and checks nothing else came.
    @Test func watchPrintsOneLinePerMerge() async throws {
        let dir = TemporaryDirectory("cli")
        let p = dir.path
        #expect(try await Self.imprint(["new", "w.imprint"], device: "laptop", in: p).status == 0)
        let binary = try #require(Self.binary)
        let watch = Process()
        watch.executableURL = URL(fileURLWithPath: binary)
        // The timeout only ends a watch that never printed; the test stops it first.
        watch.arguments = ["watch", "w.imprint", "--timeout", "120", "--poll", "0.2", "--device", "laptop"]
        watch.currentDirectoryURL = URL(fileURLWithPath: p)
        let out = Pipe()
        watch.standardOutput = out
        let ended = try ChildProcess.start(watch)
        #expect(try await Self.imprint(["edit", "w.imprint", "--insert", "0", "from the phone"], device: "phone", in: p).status == 0)
        let reader = out.fileHandleForReading
        var output = try await onOwnThread {
            var output = Data()
            while !output.contains(UInt8(ascii: "\n")) {
                let chunk = reader.availableData
                if chunk.isEmpty { break }  // watch exited without a line
                output.append(chunk)
            }
            return output
        }
        #expect(try await Self.imprint(["text", "w.imprint"], in: p).stdout == "from the phone")
        // SIGKILL: the test runner's children may inherit an ignored SIGINT and SIGTERM.
        kill(watch.processIdentifier, SIGKILL)
        output.append(try await onOwnThread { reader.readDataToEndOfFile() })
        await ended.value
        let text = String(decoding: output, as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1, "\(text)")
        #expect(lines.first?.contains("merged 1 change,") == true, "\(text)")
    }

    /// Assets stream, measured where nothing else counts: the peak resident memory of the
    /// `imprint` process itself (`ChildPeakMemory`, so tests running beside this one cannot
    /// move it) while it adds and exports a 96 MiB asset stays within 48 MiB of what the
    /// same command needs to list assets.
    @Test func assetsStreamInBoundedMemory() async throws {
        let dir = TemporaryDirectory("cli-asset-memory")
        let p = dir.path
        #expect(try await Self.imprint(["new", "b.imprint"], in: p).status == 0)
        let total = 96 << 20
        var hasher = SHA256()
        #expect(FileManager.default.createFile(atPath: p + "/big.bin", contents: nil))
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: p + "/big.bin"))
        var piece = [UInt8](repeating: 0, count: 1 << 20)
        for i in 0..<(total / piece.count) {
            for j in stride(from: 0, to: piece.count, by: 4096) { piece[j] = UInt8(truncatingIfNeeded: i &+ j) }
            hasher.update(data: piece)
            try file.write(contentsOf: piece)
        }
        try file.close()
        let id = Hex.encode(Array(hasher.finalize()))
        let binary = try #require(Self.binary)
        let environment = ["IMPRINT_DEVICE": "laptop"]
        let add = try ChildPeakMemory.run(binary, ["asset", "add", "b.imprint", "big.bin"], in: p, environment: environment)
        let get = try ChildPeakMemory.run(binary, ["asset", "get", "b.imprint", id, "-o", "copy.bin"], in: p, environment: environment)
        let list = try ChildPeakMemory.run(binary, ["asset", "list", "b.imprint"], in: p, environment: environment)
        #expect(add.status == 0 && get.status == 0 && list.status == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: p + "/copy.bin")[.size] as? Int == total)
        print("asset streaming: imprint peak RSS list \(list.peakResidentBytes >> 20) MiB, add \(add.peakResidentBytes >> 20) MiB, get \(get.peakResidentBytes >> 20) MiB for a 96 MiB asset")
        #expect(add.peakResidentBytes - list.peakResidentBytes < 48 << 20, "add: \(add.peakResidentBytes) vs \(list.peakResidentBytes)")
        #expect(get.peakResidentBytes - list.peakResidentBytes < 48 << 20, "get: \(get.peakResidentBytes) vs \(list.peakResidentBytes)")
    }
}
