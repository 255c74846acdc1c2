import Foundation
import ImprintServerTestSupport
import ImprintTestSupport
import Testing

/// The sharing commands of the CLI contract, run as a user would against a real server:
/// what they print (`identity show` and `share` end with the DID and the convo id alone on
/// their last line; `--json` is one object) and how they fail (one `error:` line, exit 1 for
/// a user error).
extension SyncSuites {
@Suite struct SharingCLITests {
    @Test func theSharingCommandsKeepTheirContract() async throws {
        let imprint = try #require(siblingExecutable("imprint"), "the imprint executable is built by swift build --build-tests")
        try await SyncTestServer.with(.sqlite) { server in
            let cli = CLI(executable: imprint, server: server.server.baseURL)
            let root = server.directory.file("people")
            let (ha, hb, a, b) = (root + "/cli-a", root + "/cli-b", root + "/a.imprint", root + "/b.imprint")

            let aliceDID = try await cli.output(["identity", "create", "--home", ha]).lastLine
            #expect(aliceDID.hasPrefix("did:key:z6Mk"))
            #expect(try await cli.output(["identity", "show", "--home", ha]).lastLine == aliceDID)
            let bobDID = try await cli.output(["identity", "create", "--home", hb]).lastLine
            let shown = try await cli.json(["identity", "show", "--home", hb, "--json"])
            #expect(shown["did"] as? String == bobDID && (shown["unusedKeyPackages"] as? Int ?? 0) >= 5)

            _ = try await cli.output(["new", a, "--title", "CLI", "--device", "alice"])
            _ = try await cli.output(["edit", a, "--insert", "0", "Shared from the CLI.", "--device", "alice"])
            let convo = try await cli.output(["share", a, "--home", ha, "--device", "alice"]).lastLine
            #expect(convo.count == 32 && convo.allSatisfy(\.isHexDigit))
            let invited = try await cli.json(["invite", a, bobDID, "--home", ha, "--device", "alice", "--json"])
            #expect(invited["added"] as? [String] == [bobDID])
            _ = try await cli.output(["join", convo, "-o", b, "--home", hb, "--device", "bob"])
            #expect(try await cli.output(["text", b]).stdout == "Shared from the CLI.")

            _ = try await cli.output(["edit", b, "--insert", "0", "Bob: ", "--device", "bob"])
            let pushed = try await cli.json(["push", b, "--home", hb, "--device", "bob", "--json"])
            #expect(pushed["changes"] as? Int == 1 && pushed["seq"] is Int)
            let pulled = try await cli.json(["pull", a, "--home", ha, "--device", "alice", "--json"])
            #expect(pulled["messages"] as? Int == 1 && (pulled["gaps"] as? [Any])?.isEmpty == true)
            #expect(try await cli.output(["text", a]).stdout == "Bob: Shared from the CLI.")

            // An asset added on Bob's side reaches Alice when she asks for it.
            let figure = root + "/figure.bin"
            try Data("FIGURE-BYTES ".utf8 + (0..<3_000).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: figure))
            let assetID = try await cli.output(["asset", "add", b, figure, "--device", "bob"]).lastLine
            let shared = try await cli.json(["push", b, "--home", hb, "--device", "bob", "--json"])
            #expect(shared["assets"] as? Int == 1 && shared["changes"] as? Int == 1, "the asset and its reference")
            let announced = try await cli.json(["pull", a, "--home", ha, "--device", "alice", "--json"])
            #expect(announced["assets"] as? Int == 1)
            let fetched = try await cli.json(["asset", "fetch", a, "--home", ha, "--device", "alice", "--json"])
            #expect((fetched["fetched"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [assetID])
            #expect(try await cli.output(["asset", "fetch", a, "--home", ha, "--device", "alice"]).stdout == "nothing to fetch\n")
            _ = try await cli.output(["asset", "get", a, assetID, "-o", root + "/figure-copy.bin"])
            #expect(FileManager.default.contentsEqual(atPath: figure, andPath: root + "/figure-copy.bin"))

            let members = try await cli.json(["members", a, "--home", ha, "--json"])
            let dids = (members["members"] as? [[String: Any]])?.compactMap { $0["did"] as? String }
            #expect(Set(dids ?? []) == [aliceDID, bobDID] && members["epoch"] as? Int == 1)
            // Admins: Bob may not name them; Alice names Bob; Bob's side learns it at his next pull.
            let bobNaming = try await cli.failure(["admins", b, bobDID, "--home", hb, "--device", "bob"])
            #expect(bobNaming.status == 1 && bobNaming.stderr.contains("sharer"))
            let named = try await cli.json(["admins", a, bobDID, "--home", ha, "--device", "alice", "--json"])
            #expect(named["admins"] as? [String] == [aliceDID, bobDID])
            _ = try await cli.output(["pull", b, "--home", hb, "--device", "bob"])
            #expect(try await cli.output(["admins", b, "--home", hb]).stdout == "\(aliceDID)\t(sharer)\n\(bobDID)\n")
            let status = try await cli.json(["status", b, "--home", hb, "--json"])
            #expect(status["processedSeq"] as? Int == status["latestSeq"] as? Int && status["unpushedChanges"] as? Int == 0)

            // Compaction: Alice checkpoints; once Bob has processed that too, what came before goes.
            let first = try await cli.json(["compact", a, "--home", ha, "--device", "alice", "--json"])
            let checkpoint = try #require(first["snapshotSeq"] as? Int)
            _ = try await cli.output(["pull", b, "--home", hb, "--device", "bob"])
            let second = try await cli.json(["compact", a, "--home", ha, "--device", "alice", "--json"])
            #expect(second["compactedBefore"] as? Int == checkpoint && (second["deletedRecords"] as? Int ?? 0) > 0, "\(second)")
            #expect((second["cursors"] as? [[String: Any]])?.count == 2)
            let compactedText = try await cli.output(["text", a]).stdout
            #expect(try await cli.output(["text", b]).stdout == compactedText)

            // Storage of Bob's own: a second server; Alice's messages reach his inbox there.
            let own = try await StorageProviderTests.startOwnServer(in: server.directory.file("own-server"))
            do {
                let registered = try await cli.json(["identity", "storage", "set", "zone-http", "--endpoint", own.baseURL, "--home", hb, "--json"])
                #expect(registered["endpoint"] as? String == own.baseURL && registered["inbox"] as? String == "inbox_\(bobDID)")
                let shownStorage = try await cli.json(["identity", "storage", "show", "--home", hb, "--json"])
                #expect(shownStorage["endpoint"] as? String == own.baseURL && shownStorage["type"] as? String == "zone-http")
                #expect(try await cli.output(["identity", "storage", "show", "--home", ha]).stdout.contains("the documents' own server"))
                _ = try await cli.output(["pull", b, "--home", hb, "--device", "bob"])  // registers the capability there
                _ = try await cli.output(["edit", a, "--insert", "0", "Via Bob's server. ", "--device", "alice"])
                _ = try await cli.output(["push", a, "--home", ha, "--device", "alice"])
                let viaOwn = try await cli.json(["pull", b, "--home", hb, "--device", "bob", "--json"])
                #expect(viaOwn["messages"] as? Int == 1)
                #expect(try await cli.output(["text", b]).stdout == (try await cli.output(["text", a]).stdout))
                let unsupported = try await cli.failure(["identity", "storage", "set", "folder", "--home", hb])
                #expect(unsupported.status == 1 && unsupported.stderr.contains("not supported"))
                try await own.stop()
            } catch {
                try? await own.stop()
                throw error
            }

            // Failures: one error line, the contract's exit codes.
            let notShared = try await cli.failure(["push", root + "/nope.imprint", "--home", ha])
            #expect(notShared.status == 1 && notShared.stderr.hasPrefix("error:") && notShared.stderr.split(separator: "\n").count == 1)
            let noIdentity = try await cli.failure(["identity", "show", "--home", root + "/empty-home"])
            #expect(noIdentity.status == 1 && noIdentity.stderr.contains("identity create"))
            let again = try await cli.failure(["share", a, "--home", ha, "--device", "alice"])
            #expect(again.status == 1 && again.stderr.contains("already shared"))

            // A document shared with a mailbox threshold: past it, members read their inboxes.
            let m = root + "/mailbox.imprint"
            _ = try await cli.output(["new", m, "--title", "Mailbox", "--device", "alice"])
            let zero = try await cli.failure(["share", m, "--mailbox-threshold", "0", "--home", ha, "--device", "alice"])
            #expect(zero.status != 0 && zero.stderr.contains("--mailbox-threshold"))
            let mailboxConvo = try await cli.output(["share", m, "--mailbox-threshold", "1", "--home", ha, "--device", "alice"]).lastLine
            let alone = try await cli.json(["status", m, "--home", ha, "--json"])
            #expect(alone["mailboxThreshold"] as? Int == 1 && alone["readsInbox"] as? Bool == false, "one member is not past 1: \(alone)")
            _ = try await cli.output(["invite", m, bobDID, "--home", ha, "--device", "alice"])
            _ = try await cli.output(["join", mailboxConvo, "-o", root + "/mailbox-b.imprint", "--home", hb, "--device", "bob"])
            _ = try await cli.output(["edit", m, "--insert", "0", "To Bob's inbox. ", "--device", "alice"])
            _ = try await cli.output(["push", m, "--home", ha, "--device", "alice"])
            let received = try await cli.json(["pull", root + "/mailbox-b.imprint", "--home", hb, "--device", "bob", "--json"])
            #expect(received["messages"] as? Int == 1)
            let bobStatus = try await cli.json(["status", root + "/mailbox-b.imprint", "--home", hb, "--json"])
            #expect(bobStatus["mailboxThreshold"] as? Int == 1 && bobStatus["readsInbox"] as? Bool == true, "\(bobStatus)")
            #expect(try await cli.output(["text", root + "/mailbox-b.imprint"]).stdout == (try await cli.output(["text", m]).stdout))
            #expect(try await cli.output(["status", m, "--home", ha]).stdout.contains("mailbox: reads its inbox (threshold 1 members)"))

            _ = try await cli.output(["remove", a, bobDID, "--home", ha, "--device", "alice"])
            let removed = try await cli.failure(["pull", b, "--home", hb, "--device", "bob"])
            #expect(removed.status == 1 && removed.stderr.contains("removed"))
        }
    }
}
}

extension CLI {
    struct Output {
        var stdout: String
        var stderr: String
        var status: Int32
        var lastLine: String { stdout.split(separator: "\n").last.map(String.init) ?? "" }
    }

    /// Runs to the end and returns what it printed (any exit status).
    func capture(_ arguments: [String]) async throws -> Output {
        let run = try await ChildProcess.run(executable, arguments, environment: ["IMPRINT_SERVER": server])
        return Output(stdout: run.stdoutText, stderr: run.stderrText, status: run.status)
    }

    /// Runs and requires exit 0.
    func output(_ arguments: [String]) async throws -> Output {
        let result = try await capture(arguments)
        guard result.status == 0 else { throw CLIError(arguments: arguments, status: result.status, stderr: result.stderr) }
        return result
    }

    /// Runs `--json` and returns the one object it printed.
    func json(_ arguments: [String]) async throws -> [String: Any] {
        let result = try await output(arguments)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1, "--json printed \(lines.count) lines")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    /// Runs and requires a non-zero exit.
    func failure(_ arguments: [String]) async throws -> Output {
        let result = try await capture(arguments)
        #expect(result.status != 0, "imprint \(arguments.joined(separator: " ")) succeeded")
        return result
    }
}
