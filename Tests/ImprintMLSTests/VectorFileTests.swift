import Foundation
import Testing
import ImprintMLS

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
        #expect(Set(MLSTestVectors.implementedKinds) == Set(Self.implemented))
    }

    /// Runs the `mls-vectors` executable (built alongside the tests by
    /// `swift build --build-tests` / `swift test`) over the implemented files.
    @Test func executableOutputFormat() throws {
        let products = Bundle.module_productsDirectory
        let exe = products.appendingPathComponent("mls-vectors")
        try #require(FileManager.default.isExecutableFile(atPath: exe.path), "mls-vectors not built at \(exe.path)")
        let p = Process()
        p.executableURL = exe
        p.arguments = Self.implemented.map { Self.vectorDir + "/\($0).json" }
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(out)")
        let lines = out.split(separator: "\n").map(String.init)
        #expect(lines.count == Self.implemented.count)
        for (name, line) in zip(Self.implemented, lines) {
            #expect(line.hasPrefix("\(name): "))
            #expect(line.range(of: #"^[a-z_-]+: \d+ passed, 0 failed, \d+ skipped$"#, options: .regularExpression) != nil, "\(line)")
        }
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
