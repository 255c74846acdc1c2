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
                     "cy is refused", "appear in none", "the comment sits on the words it was made on: true"] {
            #expect(result.stdout.contains(line), "the demo did not print \(line)")
        }
    }

}
}
