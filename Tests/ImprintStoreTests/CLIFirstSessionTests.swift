import Foundation
import Testing
import ImprintTestSupport

/// What a first session with `imprint` runs into: clear messages, honest counts, formats that
/// match their names, and copies that show before they are synced.
@Suite struct CLIFirstSessionTests {
    func run(_ arguments: [String], device: String = "laptop", in directory: String) async throws -> CLITests.Run {
        try await CLITests.imprint(arguments, device: device, in: directory)
    }

    func oneErrorLine(_ result: CLITests.Run, containing text: String) -> Bool {
        result.stderr.hasPrefix("error: ") && result.stderr.filter { $0 == "\n" }.count == 1 && result.stderr.contains(text)
    }

    @Test func messagesSayWhatToDo() async throws {
        let dir = TemporaryDirectory("cli-first")
        let p = dir.path
        let version = try await run(["--version"], in: p)
        #expect(version.status == 0 && version.stdout.split(separator: ".").count == 3, "\(version)")

        let unknown = try await run(["frobnicate"], in: p)
        #expect(unknown.status == 1 && oneErrorLine(unknown, containing: "unknown command 'frobnicate'; usage: imprint <command>"), "\(unknown)")

        #expect(try await run(["new", "a.imprint"], in: p).status == 0)
        let negative = try await run(["edit", "a.imprint", "--insert", "-1", "x"], in: p)
        #expect(negative.status == 1 && oneErrorLine(negative, containing: "0 or more, got -1"), "\(negative)")

        try FileManager.default.createDirectory(atPath: dir.file("empty"), withIntermediateDirectories: false)
        for command in [["text", "empty"], ["archive", "empty", "-o", "e.zip"]] {
            let result = try await run(command, in: p)
            #expect(result.status == 1 && oneErrorLine(result, containing: "not an Imprint bundle: no metadata.json"), "\(command): \(result)")
        }

        let folder = try await run(["unarchive", "a.imprint", "-o", "x.imprint"], in: p)
        #expect(folder.status == 1 && oneErrorLine(folder, containing: "is a directory, not an archive file"), "\(folder)")

        // Reading needs no valid device id; writing does.
        #expect(try await run(["text", "a.imprint"], device: "My Mac", in: p).status == 0)
        #expect(try await run(["edit", "a.imprint", "--insert", "0", "x"], device: "My Mac", in: p).status == 1)
    }

    @Test func archivesAreWhatTheirNamesSay() async throws {
        let dir = TemporaryDirectory("cli-first")
        let p = dir.path
        #expect(try await run(["new", "a.imprint"], in: p).status == 0)
        #expect(try await run(["edit", "a.imprint", "--insert", "0", "zipped"], in: p).status == 0)
        #expect(try await run(["archive", "a.imprint", "-o", "a.zip"], in: p).status == 0)
        #expect(FileManager.default.contents(atPath: dir.file("a.zip"))?.prefix(2) == Data("PK".utf8))
        #expect(try await run(["archive", "a.imprint", "-o", "a.tgz"], in: p).status == 0)
        #expect(FileManager.default.contents(atPath: dir.file("a.tgz"))?.prefix(2) == Data([0x1F, 0x8B]))
        let unknown = try await run(["archive", "a.imprint", "-o", "a.bin"], in: p)
        #expect(unknown.status == 1 && oneErrorLine(unknown, containing: "cannot tell the archive format"), "\(unknown)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("a.bin")))
        #expect(try await run(["archive", "a.imprint", "-o", "a.bin", "--format", "zip"], in: p).status == 0)
        for archive in ["a.zip", "a.tgz", "a.bin"] {
            #expect(try await run(["unarchive", archive, "-o", archive + ".imprint"], in: p).status == 0)
            #expect(try await run(["text", archive + ".imprint"], in: p).stdout == "zipped")
        }

        // A merge from an archive of another document names the archive, not a staging folder.
        #expect(try await run(["new", "other.imprint"], in: p).status == 0)
        #expect(try await run(["archive", "other.imprint", "-o", "other.tar.zst"], in: p).status == 0)
        let merge = try await run(["merge", "a.imprint", "other.tar.zst"], in: p)
        #expect(merge.status == 1 && merge.stderr.contains("other.tar.zst") && !merge.stderr.contains("imprint-merge-"), "\(merge)")
    }

    @Test func countsLogsAndAssetPrefixes() async throws {
        let dir = TemporaryDirectory("cli-first")
        let p = dir.path
        #expect(try await run(["new", "a.imprint"], in: p).status == 0)
        for word in ["one ", "two ", "three "] {
            #expect(try await run(["edit", "a.imprint", "--insert", "0", word], in: p).status == 0)
        }
        let log = try await run(["log", "a.imprint"], in: p).stdout.split(separator: "\n")
        #expect(log.map { $0.contains("laptop  seq \(log.firstIndex(of: $0)! + 1)  ") } == [true, true, true, true], "\(log)")

        // The phone's first sync: the laptop's four changes are new to it, and the count reads well.
        let first = try await run(["sync", "a.imprint"], device: "phone", in: p)
        #expect(first.stdout.hasPrefix("merged 4 changes, removed 0 conflict copies"), "\(first)")
        #expect(try await run(["edit", "a.imprint", "--insert", "0", "four "], in: p).status == 0)
        let second = try await run(["sync", "a.imprint"], device: "phone", in: p)
        #expect(second.stdout.hasPrefix("merged 1 change, removed 0 conflict copies"), "\(second)")

        try Data("attachment".utf8).write(to: URL(fileURLWithPath: dir.file("pic.bin")))
        let id = try await run(["asset", "add", "a.imprint", "pic.bin"], in: p).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id.count == 64)
        #expect(try await run(["asset", "get", "a.imprint", String(id.prefix(8)), "-o", "out.bin"], in: p).status == 0)
        #expect(FileManager.default.contents(atPath: dir.file("out.bin")) == Data("attachment".utf8))
        let tooShort = try await run(["asset", "get", "a.imprint", "ab"], in: p)
        #expect(tooShort.status == 1 && oneErrorLine(tooShort, containing: "prefix of at least 4"), "\(tooShort)")
        #expect(try await run(["asset", "rm", "a.imprint", String(id.prefix(10))], in: p).status == 0)
    }

    @Test func aDuplicateBundleShowsBeforeSync() async throws {
        let dir = TemporaryDirectory("cli-first")
        let p = dir.path
        #expect(try await run(["new", "a.imprint"], in: p).status == 0)
        try FileManager.default.copyItem(atPath: dir.file("a.imprint"), toPath: dir.file("a 3.imprint"))
        #expect(try await run(["edit", "a 3.imprint", "--insert", "0", "from the copy"], device: "phone", in: p).status == 0)
        let text = try await run(["text", "a.imprint"], in: p)
        #expect(text.stdout == "from the copy")
        #expect(text.stderr.contains("a 3.imprint") && text.stderr.contains("imprint sync"), "\(text.stderr)")
        let sync = try await run(["sync", "a.imprint", "--json", "--settle", "0"], in: p)
        #expect(sync.stdout.contains("a 3.imprint") && sync.status == 0, "\(sync)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("a 3.imprint")))
        #expect(try await run(["text", "a.imprint"], device: "tablet", in: p).stdout == "from the copy")
    }
}
