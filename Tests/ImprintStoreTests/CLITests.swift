import Foundation
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
    static func imprint(_ arguments: [String], device: String = "laptop", in directory: String) throws -> Run {
        guard let binary else {
            Issue.record("imprint binary not built (swift build --product imprint)")
            return Run(status: -1, stdout: "", stderr: "")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var environment = ProcessInfo.processInfo.environment
        environment["IMPRINT_DEVICE"] = device
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                   stderr: String(decoding: stderr, as: UTF8.self))
    }

    func jsonObject(_ text: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(value as? [String: Any])
    }

    @Test func newEditTextLogSyncAcrossTwoDevices() throws {
        let dir = TemporaryDirectory("cli")
        let p = dir.path
        #expect(try Self.imprint(["new", "notes.imprint", "--title", "Notes"], in: p).status == 0)
        #expect(try Self.imprint(["edit", "notes.imprint", "--insert", "0", "Hello world"], in: p).status == 0)
        #expect(try Self.imprint(["edit", "notes.imprint", "--delete", "5", "6"], in: p).status == 0)
        #expect(try Self.imprint(["edit", "notes.imprint", "--insert", "5", ", phone", "--message", "from phone"], device: "phone", in: p).status == 0)
        #expect(try Self.imprint(["edit", "notes.imprint", "--set", "status=draft"], device: "phone", in: p).status == 0)
        let text = try Self.imprint(["text", "notes.imprint"], in: p)
        #expect(text.status == 0)
        #expect(text.stdout == "Hello, phone")

        try "Hello there, phone!".write(toFile: dir.file("new.txt"), atomically: true, encoding: .utf8)
        #expect(try Self.imprint(["edit", "notes.imprint", "--replace-with", "new.txt"], in: p).status == 0)
        #expect(try Self.imprint(["text", "notes.imprint"], in: p).stdout == "Hello there, phone!")

        let show = try jsonObject(try Self.imprint(["show", "notes.imprint", "--json"], in: p).stdout)
        #expect(show["body"] as? String == "Hello there, phone!")
        #expect(show["status"] as? String == "draft")
        #expect(show["title"] as? String == "Notes")

        let log = try Self.imprint(["log", "notes.imprint", "--json"], in: p)
        #expect(log.status == 0)
        let changes = try #require(try jsonObject(log.stdout)["changes"] as? [[String: Any]])
        #expect(changes.count == 6)
        #expect(Set(changes.compactMap { $0["device"] as? String }) == ["laptop", "phone"])
        #expect(changes.contains { $0["message"] as? String == "from phone" })
        #expect(changes.allSatisfy { ($0["hash"] as? String)?.count == 64 && $0["seq"] is NSNumber && $0["time"] is NSNumber })
        #expect(try Self.imprint(["log", "notes.imprint"], in: p).stdout.split(separator: "\n").count == 6)

        // A conflict copy of laptop's log, as Dropbox would leave it, is merged then tidied.
        try FileManager.default.copyItem(atPath: dir.file("notes.imprint/changes/phone.log"),
                                         toPath: dir.file("notes.imprint/changes/phone (laptop's conflicted copy 2026-11-21).log"))
        let sync = try Self.imprint(["sync", "notes.imprint", "--json", "--settle", "0"], in: p)
        #expect(sync.status == 0)
        let removed = try #require(try jsonObject(sync.stdout)["removed"] as? [String])
        #expect(removed.count == 1)
        #expect(try Self.imprint(["text", "notes.imprint"], device: "tablet", in: p).stdout == "Hello there, phone!")
    }

    @Test func mergeArchiveAndAssets() throws {
        let dir = TemporaryDirectory("cli")
        let p = dir.path
        #expect(try Self.imprint(["new", "a.imprint"], in: p).status == 0)
        #expect(try Self.imprint(["archive", "a.imprint", "-o", "a.tar.zst"], in: p).status == 0)
        #expect(try Self.imprint(["unarchive", "a.tar.zst", "-o", "b.imprint"], in: p).status == 0)
        #expect(try Self.imprint(["edit", "a.imprint", "--insert", "0", "from a. "], in: p).status == 0)
        #expect(try Self.imprint(["edit", "b.imprint", "--insert", "0", "from b."], device: "desk", in: p).status == 0)
        #expect(try Self.imprint(["merge", "a.imprint", "b.imprint"], in: p).status == 0)
        #expect(try Self.imprint(["merge", "b.imprint", "a.imprint"], device: "desk", in: p).status == 0)
        let a = try Self.imprint(["text", "a.imprint"], in: p).stdout
        #expect(a.contains("from a. ") && a.contains("from b."))
        #expect(try Self.imprint(["text", "b.imprint"], in: p).stdout == a)

        try Data("attachment bytes".utf8).write(to: URL(fileURLWithPath: dir.file("pic.bin")))
        let added = try Self.imprint(["asset", "add", "a.imprint", "pic.bin"], in: p)
        #expect(added.status == 0)
        let id = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id.count == 64)
        #expect(try Self.imprint(["asset", "list", "a.imprint"], in: p).stdout == "\(id) 16 pic.bin\n")
        #expect(try Self.imprint(["show", "a.imprint", "--json"], in: p).stdout.contains("\"asset:\(id)\":\"pic.bin\""))
        #expect(try Self.imprint(["asset", "get", "a.imprint", id, "-o", "out.bin"], in: p).status == 0)
        #expect(FileManager.default.contents(atPath: dir.file("out.bin")) == Data("attachment bytes".utf8))
        #expect(try Self.imprint(["asset", "rm", "a.imprint", id], in: p).status == 0)
        #expect(try Self.imprint(["asset", "list", "a.imprint"], in: p).stdout.isEmpty)
    }

    @Test func exitStatusesAndOneLineErrors() throws {
        let dir = TemporaryDirectory("cli")
        let p = dir.path
        #expect(try Self.imprint(["new", "d.imprint"], in: p).status == 0)
        for arguments in [["edit", "d.imprint", "--insert", "5", "x"], ["text", "missing.imprint"],
                          ["edit", "d.imprint"], ["no-such-command"], ["new", "d.imprint"], ["new", "plain-dir"]] {
            let run = try Self.imprint(arguments, in: p)
            #expect(run.status == 1, "\(arguments)")
            #expect(run.stderr.hasPrefix("error: ") && run.stderr.filter { $0 == "\n" }.count == 1, "\(arguments): \(run.stderr)")
        }

        // A change record that is not an engine change: hostile data, exit 2.
        #expect(try Self.imprint(["new", "bad.imprint"], in: p).status == 0)
        var log = try Data(contentsOf: URL(fileURLWithPath: dir.file("bad.imprint/changes/laptop.log")))
        log.replaceSubrange(0..<8, with: Data("NOTALOG!".utf8))
        try log.write(to: URL(fileURLWithPath: dir.file("bad.imprint/changes/laptop.log")))
        let corruptLog = try Self.imprint(["text", "bad.imprint"], in: p)
        #expect(corruptLog.status == 2)
        #expect(corruptLog.stderr.hasPrefix("error: "))

        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: dir.file("d.imprint/metadata.json")))
        for command in ["text", "log", "sync", "show"] {
            let run = try Self.imprint([command, "d.imprint"], in: p)
            #expect(run.status == 2, "\(command)")
            #expect(run.stderr.hasPrefix("error: ") && run.stderr.filter { $0 == "\n" }.count == 1)
        }
        try Data("not an archive at all".utf8).write(to: URL(fileURLWithPath: dir.file("junk.tar")))
        #expect(try Self.imprint(["unarchive", "junk.tar", "-o", "x.imprint"], in: p).status == 2)
    }

    @Test func watchPrintsOneLinePerMerge() throws {
        let dir = TemporaryDirectory("cli")
        let p = dir.path
        #expect(try Self.imprint(["new", "w.imprint"], device: "laptop", in: p).status == 0)
        let binary = try #require(Self.binary)
        let watch = Process()
        watch.executableURL = URL(fileURLWithPath: binary)
        watch.arguments = ["watch", "w.imprint", "--timeout", "4", "--poll", "0.2", "--device", "laptop"]
        watch.currentDirectoryURL = URL(fileURLWithPath: p)
        let out = Pipe()
        watch.standardOutput = out
        try watch.run()
        Thread.sleep(forTimeInterval: 1)
        #expect(try Self.imprint(["edit", "w.imprint", "--insert", "0", "from the phone"], device: "phone", in: p).status == 0)
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        watch.waitUntilExit()
        #expect(watch.terminationStatus == 0)
        let lines = output.split(separator: "\n")
        #expect(lines.count == 1, "\(output)")
        #expect(lines.first?.contains("merged 1 change,") == true, "\(output)")
        #expect(try Self.imprint(["text", "w.imprint"], in: p).stdout == "from the phone")
    }
}
