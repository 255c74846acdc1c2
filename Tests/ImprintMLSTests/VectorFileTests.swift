import Foundation
import ImprintMLS
import ImprintTestSupport
import Testing

/// Runs the official RFC 9420 vector files from `../shared/mls-test-vectors`
/// (relative to the repository root).
@Suite struct VectorFileTests {
    static let vectorDir: String = {
        // <repo>/Tests/ImprintMLSTests/VectorFileTests.swift → <repo>/../shared/mls-test-vectors
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return repo.deletingLastPathComponent().appendingPathComponent("shared/mls-test-vectors").path
    }()

    /// The vector files implemented so far. Extend this list as each kind
    /// lands; the runner reports the others as "not implemented".
    static let implemented = [
        "tree-math", "deserialization", "crypto-basics", "messages", "key-schedule", "psk_secret",
        "transcript-hashes", "secret-tree", "message-protection", "welcome", "tree-validation", "tree-operations",
        "treekem", "passive-client-welcome", "passive-client-handling-commit",
    ]

    @Test(arguments: implemented) func vectorFilePasses(name: String) throws {
        let path = Self.vectorDir + "/\(name).json"
        try #require(FileManager.default.fileExists(atPath: path), "missing vector file \(path)")
        let report = MLSTestVectors.run(path: path)
        #expect(report.implemented)
        #expect(report.failed == 0, "\(report.failures)")
        #expect(report.passed > 0)
        // Only records of unsupported cipher suites (4-7) may be skipped.
        let records = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [[String: Any]] ?? []
        let unsupported = records.filter { (($0["cipher_suite"] as? Int).map { !(1 ... 3).contains($0) }) ?? false }.count
        #expect(report.skipped == unsupported)
        #expect(report.passed + report.skipped == records.count)
    }

    @Test func implementedListMatchesRunner() {
        // passive-client-random has the handling-commit format but its file is held out.
        #expect(Set(MLSTestVectors.implementedKinds) == Set(Self.implemented + ["passive-client-random"]))
    }

    /// Runs the `mls-vectors` executable (built alongside the tests by
    /// `swift build --build-tests` / `swift test`) over every file in the folder.
    @Test func executableOverWholeFolder() async throws {
        let exe = Bundle.module_productsDirectory.appendingPathComponent("mls-vectors")
        try #require(FileManager.default.isExecutableFile(atPath: exe.path), "mls-vectors not built at \(exe.path)")
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.vectorDir).filter { $0.hasSuffix(".json") }.sorted()
        try #require(files.count >= Self.implemented.count)
        let run = try await ChildProcess.run(exe.path, files.map { Self.vectorDir + "/" + $0 })
        let out = run.stdoutText
        let lines = out.split(separator: "\n").map(String.init)
        #expect(lines.count == files.count)
        var allImplemented = true
        for (file, line) in zip(files, lines) {
            let name = String(file.dropLast(5))
            #expect(line.hasPrefix("\(name): "))
            // Only files of implemented kinds are asserted on; others must say so.
            if Self.implemented.contains(name) {
                #expect(line.range(of: #"^[a-z_-]+: [1-9]\d* passed, 0 failed, \d+ skipped$"#, options: .regularExpression) != nil, "\(line)")
            } else {
                allImplemented = false
            }
        }
        if allImplemented { #expect(run.status == 0, "\(out)") }
    }

    @Test func executableReportsUnknownKindAndFailsIt() async throws {
        let exe = Bundle.module_productsDirectory.appendingPathComponent("mls-vectors")
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-kind.json")
        try Data("[]".utf8).write(to: tmp)
        defer { try? FileManager.default.removeItem(at: tmp) }
        let run = try await ChildProcess.run(exe.path, [tmp.path])
        #expect(run.status == 1)
        #expect(run.stdoutText == "no-such-kind: not implemented\n")
    }
}

extension Bundle {
    /// Directory holding the built products (the test bundle's parent on Linux).
    static var module_productsDirectory: URL {
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        return Bundle.main.bundleURL
        #else
        return Bundle.main.bundleURL
        #endif
    }
}
