import Crypto
import Foundation
import ImprintSnapshot
import ImprintTestSupport
import Testing

/// `imprint export-snapshot` and `imprint comments import|list` as a user runs them: the comment
/// key goes into the home's key store, comments open only there, exit codes follow the
/// contract (1 for a user's mistake, 2 for damaged or forged data).
@Suite struct SnapshotCLITests {
    struct Output { var status: Int32; var stdout: String; var stderr: String }

    static func imprint(_ arguments: [String], home: String, in dir: TemporaryDirectory, server: String = "") async throws -> Output {
        let executable = try #require(siblingExecutable("imprint"), "the imprint executable is built by swift build --build-tests")
        let run = try await ChildProcess.run(executable, arguments, environment: ["IMPRINT_HOME": home, "IMPRINT_DEVICE": "laptop", "IMPRINT_SERVER": server],
                                             directory: dir.path)
        return Output(status: run.status, stdout: run.stdoutText, stderr: run.stderrText)
    }

    @Test func exportImportAndListThroughTheCommandLine() async throws {
        let dir = TemporaryDirectory("snapshot-cli")
        let home = dir.file("home")
        func run(_ arguments: String...) async throws -> Output { try await Self.imprint(arguments, home: home, in: dir) }
        #expect(try await run("new", "essay.imprint", "--title", "Essay").status == 0)
        #expect(try await run("edit", "essay.imprint", "--insert", "0", "--", "The heron waits where the water slows.").status == 0)
        try "short\n".write(toFile: dir.file("weak"), atomically: true, encoding: .utf8)
        try "a long passphrase, said aloud\n".write(toFile: dir.file("pw"), atomically: true, encoding: .utf8)

        let weak = try await run("export-snapshot", "essay.imprint", "-o", "review.html", "--password-file", "weak")
        #expect(weak.status == 1 && weak.stderr.contains("shorter than 8"))
        let both = try await run("export-snapshot", "essay.imprint", "-o", "review.html")
        #expect(both.status != 0)
        let link = try await run("export-snapshot", "essay.imprint", "-o", "review.html", "--link")
        #expect(link.status == 1 && link.stderr.contains("no server"), "\(link.stderr)")
        let past = try await run("export-snapshot", "essay.imprint", "-o", "review.html", "--password-file", "pw", "--expires", "2001-01-01")
        #expect(past.status == 1 && past.stderr.contains("in the past"))

        let exported = try await run("export-snapshot", "essay.imprint", "-o", "review.html", "--password-file", "pw", "--json", "--expires", "2099-01-01")
        #expect(exported.status == 0, "\(exported.stderr)")
        let html = Array(try Data(contentsOf: URL(fileURLWithPath: dir.file("review.html"))))
        #expect(html.firstRange(of: Array("heron".utf8)) == nil)

        // The reviewer's part, as the viewer does it.
        let content = try ReviewSnapshotReader.open(try ReviewSnapshotReader.envelope(inHTML: html), password: "a long passphrase, said aloud")
        #expect(content.expires?.hasPrefix("2099-01-01T23:59:59") == true)
        #expect(exported.stdout.contains(content.snapshotId))
        let ownerKey = try P256.KeyAgreement.PublicKey(x963Representation: try #require(Data(base64Encoded: content.commentKey)))
        let comment = try reviewerComment(on: "water slows", in: content, text: "Lovely.", author: "Rita")
        let good = ReviewCommentFile(snapshotId: content.snapshotId, items: [try CommentSealing.seal(comment, to: ownerKey)])
        try Data(good.encoded()).write(to: URL(fileURLWithPath: dir.file("rita.imprint-comments")))

        #expect(try await run("edit", "essay.imprint", "--insert", "4", "--", "grey ").status == 0)
        let imported = try await run("comments", "import", "essay.imprint", "rita.imprint-comments", "--json")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("\"added\":1"))
        let again = try await run("comments", "import", "essay.imprint", "rita.imprint-comments")
        #expect(again.status == 0 && again.stdout.contains("0 comments, 1 already present"))
        let listed = try await run("comments", "list", "essay.imprint")
        #expect(listed.stdout.contains("Rita") && listed.stdout.contains("on \"water slows\""), "\(listed.stdout)")

        // A forged item among good ones: the good ones land, the command exits 2 naming it.
        var forged = good
        var second = comment
        second.id = "second-comment"
        forged.items.append(try CommentSealing.seal(second, to: P256.KeyAgreement.PrivateKey().publicKey))  // not to the owner
        try Data(forged.encoded()).write(to: URL(fileURLWithPath: dir.file("forged.imprint-comments")))
        let refused = try await run("comments", "import", "essay.imprint", "forged.imprint-comments")
        #expect(refused.status == 2 && refused.stderr.contains("rejected"))
        // Not a comment file at all: exit 2. Comments for a snapshot this home never made: exit 1.
        try Data("{]".utf8).write(to: URL(fileURLWithPath: dir.file("junk.imprint-comments")))
        #expect(try await run("comments", "import", "essay.imprint", "junk.imprint-comments").status == 2)
        let stranger = ReviewCommentFile(snapshotId: ReviewExport.newSnapshotId(), items: [])
        try Data(stranger.encoded()).write(to: URL(fileURLWithPath: dir.file("stranger.imprint-comments")))
        let unknown = try await run("comments", "import", "essay.imprint", "stranger.imprint-comments")
        #expect(unknown.status == 1 && unknown.stderr.contains("no comment key"))

        // Comments of this snapshot are refused by another document.
        #expect(try await run("new", "other.imprint").status == 0)
        let wrongDocument = try await run("comments", "import", "other.imprint", "rita.imprint-comments")
        #expect(wrongDocument.status == 1 && wrongDocument.stderr.contains("another document"))
    }
}
