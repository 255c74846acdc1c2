import Foundation
import ImprintTestSupport
import Testing

/// The samples an app developer copies (Samples/) run and show what Samples/README.md says.
extension SyncSuites {
@Suite struct SamplesTests {
    static func run(_ name: String, _ arguments: [String] = []) async throws -> CLI.Output {
        let executable = try #require(siblingExecutable(name), "\(name) is built by swift build --build-tests")
        return try await CLI(executable: executable, server: "").capture(arguments)
    }

    @Test func folderSyncMergesTheConflictCopy() async throws {
        let out = try await Self.run("sample-folder-sync")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("removed once settled: [\"notes 2.imprint\"]") && out.stdout.contains("both machines agree: true"), "\(out.stdout)")
    }

    @Test func reviewerExportBringsTheCommentHome() async throws {
        let out = try await Self.run("sample-reviewer-export")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("Rita on \"where the water slows\""), "\(out.stdout)")
    }

    @Test func sharedDocumentCoEditsAndRemoves() async throws {
        let out = try await Self.run("sample-shared-document")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("ben: Plan: Ship the editor. Ben: tests first.") && out.stdout.contains("ben's copy ends before the removal: true"),
                "\(out.stdout)")
    }

    /// The README's quick start is made of lines of the samples, so it cannot drift from code
    /// that runs: every line of its Swift blocks after the first (the Package.swift one) is in
    /// the sample the block names.
    @Test func theReadmeQuickStartIsCutFromTheSamples() throws {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Use it in an app").dropFirst().first?
            .components(separatedBy: "\n## ").first)
        let parts = section.components(separatedBy: "```swift\n").dropFirst(2)  // past the Package.swift block
        #expect(parts.count == 3)
        for part in parts {
            let code = part.components(separatedBy: "```").first ?? ""
            let before = section.components(separatedBy: "```swift\n" + part).first ?? ""
            let sample = try #require(before.components(separatedBy: "`Samples/").last?.split(separator: "`").first.map(String.init))
            let text = try String(contentsOf: root.appendingPathComponent("Samples/\(sample)/main.swift"), encoding: .utf8)
            for line in code.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                #expect(text.contains(line.trimmingCharacters(in: .whitespaces)), "README line not in Samples/\(sample): \(line)")
            }
        }
    }

    @Test func coEditingConverges() async throws {
        let out = try await Self.run("sample-coediting")
        #expect(out.status == 0, "\(out.stderr)")
    }
}
}
