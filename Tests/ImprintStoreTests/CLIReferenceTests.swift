import Foundation
import ImprintTestSupport
import Testing

/// `docs/cli.md` is the `imprint` command reference, kept true by this test: it must equal
/// what the built binary's own help says for every command and subcommand, so an option
/// added, renamed or removed without the page changing fails here. To rewrite the page after
/// changing the CLI: `IMPRINT_UPDATE_CLI_REFERENCE=1 swift test --filter CLIReferenceTests`.
@Suite struct CLIReferenceTests {
    static let page = repositoryRoot + "/docs/cli.md"

    @Test func theReferencePageIsTheBinarysOwnHelp() async throws {
        let binary = try #require(CLITests.binary)
        let expected = try await Self.reference(binary: binary)
        if ProcessInfo.processInfo.environment["IMPRINT_UPDATE_CLI_REFERENCE"] == "1" {
            try expected.write(toFile: Self.page, atomically: true, encoding: .utf8)
        }
        let current = (try? String(contentsOfFile: Self.page, encoding: .utf8)) ?? ""
        #expect(current == expected, "docs/cli.md differs from the CLI's help: IMPRINT_UPDATE_CLI_REFERENCE=1 swift test --filter CLIReferenceTests rewrites it")
        // The walk must have found the commands scripts rely on, nested ones included.
        for command in ["imprint new", "imprint edit", "imprint share", "imprint asset add", "imprint mls", "imprint export-snapshot", "imprint demo"] {
            #expect(expected.contains("\n## `\(command)`\n"), "\(command) missing from the walk")
        }
    }

    /// The page: an introduction, then every command depth first, in the help's order.
    static func reference(binary: String) async throws -> String {
        var page = """
            # `imprint` command reference

            Every command and option of the `imprint` tool, as its own `--help` prints them (this
            page is checked against the built binary by `CLIReferenceTests`; what the commands do
            end to end is in the README, `bundle-format.md`, `sync.md`, `reviewer-snapshots.md` and
            `mls-cli.md`). Exit codes: 0 success; 1 a usage or user error (also a bundle whose
            files are still arriving); 2 corrupt or hostile data. Errors are one line on stderr
            starting `error:`. `--json` prints one JSON object on stdout where a command offers it.

            """
        var queue: [[String]] = [[]]
        while !queue.isEmpty {
            let path = queue.removeFirst()
            let help = try await run(binary, ["help"] + path)
            page += "\n## `\((["imprint"] + path).joined(separator: " "))`\n\n```text\n"
            page += help.trimmingCharacters(in: .whitespacesAndNewlines) + "\n```\n"
            queue.insert(contentsOf: subcommands(in: help).map { path + [$0] }, at: 0)
        }
        return page
    }

    /// The names listed under `SUBCOMMANDS:` (each at two spaces of indent), in order.
    static func subcommands(in help: String) -> [String] {
        guard let start = help.range(of: "\nSUBCOMMANDS:\n") else { return [] }
        var names: [String] = []
        for line in help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty || !line.hasPrefix("  ") { if !names.isEmpty || !line.isEmpty { break } else { continue } }
            let text = line.dropFirst(2)
            guard let first = text.first, first != " ", !text.hasPrefix("See ") else { continue }
            names.append(String(text.prefix { $0 != " " }))
        }
        return names.filter { $0 != "help" }
    }

    static func run(_ binary: String, _ arguments: [String]) async throws -> String {
        // A fixed width: help wraps to the terminal's, which a test run does not have.
        try await ChildProcess.run(binary, arguments, environment: ["COLUMNS": "100"]).stdoutText
    }
}
