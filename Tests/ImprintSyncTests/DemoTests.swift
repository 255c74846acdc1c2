import Foundation
import ImprintTestSupport
import Testing

/// `imprint demo`, the README's main job, runs to the end and shows what it says it proves:
/// the replicas converge, the folder copies merge, three members co-edit, the removed member
/// is cut off, and the server's files hold none of the document's words.
extension SyncSuites {
@Suite struct DemoTests {
    @Test func theDemoRunsAndProvesItsPoints() async throws {
        let imprint = try #require(siblingExecutable("imprint"), "the imprint executable is built by swift build --build-tests")
        let result = try await CLI(executable: imprint, server: "").capture(["demo"])
        #expect(result.status == 0, "imprint demo exited \(result.status): \(result.stderr)")
        for line in ["converged:                true", "both machines agree and kept every edit: true", "(same on all three)",
                     "cy is refused", "appear in none", "fetched by ben on demand: identical", "ada sees ben editing at", "before ada pushed", "blanked characters where ada's has the deleted words", "the comment sits on the words it was made on: true"] {
            #expect(result.stdout.contains(line), "the demo did not print \(line)")
        }
        #expect(result.stdout.contains("== Summary ==") && result.stdout.contains("all 19 steps hold"), "\(result.stdout.suffix(800))")
    }

    /// `imprint demo --json`: one object, every step named, checked and timed, nothing else.
    @Test func theDemoReportsItsStepsAsOneJSONObject() async throws {
        let imprint = try #require(siblingExecutable("imprint"), "the imprint executable is built by swift build --build-tests")
        let result = try await CLI(executable: imprint, server: "").capture(["demo", "--json"])
        #expect(result.status == 0, "imprint demo --json exited \(result.status): \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout.prefix(300))")
        #expect(object["ok"] as? Bool == true)
        let steps = try #require(object["steps"] as? [[String: Any]])
        let names = steps.compactMap { $0["name"] as? String }
        #expect(names == ["replicas converge", "history and undo", "conflict copy merged", "settled copy removed", "machines agree",
                          "server started", "shared, invited, joined", "concurrent edits merge", "a figure travels encrypted",
                          "presence reaches the others", "an edit shows before its push",
                          "current state shared without deleted text", "removed member cut off", "compaction frees the zone",
                          "a member's own server", "no plaintext on the server", "snapshot exported", "wrong password refused", "comment comes home anchored"])
        for step in steps {
            #expect(step["ok"] as? Bool == true && (step["ms"] as? Double ?? -1) >= 0 && !(step["detail"] as? String ?? "").isEmpty, "\(step)")
        }
    }

}
}
