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

    @Test func coEditingConverges() async throws {
        let out = try await Self.run("sample-coediting")
        #expect(out.status == 0, "\(out.stderr)")
    }
}
}
