import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct Imprint: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imprint",
        abstract: "Collaborative documents with end-to-end encryption.",
        version: Imprint.version,
        subcommands: [
            New.self, Text.self, Show.self, Edit.self, Log.self, Merge.self, Sync.self, Watch.self,
            Archive.self, Unarchive.self, Asset.self,
            Identity.self, Share.self, Invite.self, Join.self, Push.self, Pull.self, Live.self, Remove.self, Leave.self,
            Members.self, Admins.self, SharingStatus.self, Compact.self,
            ExportSnapshot.self, Snapshots.self, Comments.self,
            MLS.self, Demo.self,
        ]
    )

    /// The release this build belongs to (`imprint --version`).
    static let version = "0.5.0"

    /// Runs the command with the exit-status contract of the CLI: 0 success, 1 usage or user
    /// error, 2 corrupt or hostile data, each failure one `error:` line on stderr.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let failure = Self.misreadArgument(arguments) { CommandFailure.report(failure) }
        let command: ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }
            CommandFailure.report(CommandFailure(message: usageMessage(for: error, arguments: arguments), status: .user))
        }
        do {
            var command = command
            try command.run()
        } catch let code as ExitCode {
            finish(code.rawValue)
        } catch let error as CommandFailure {
            CommandFailure.report(error)
        } catch {
            let failure = CommandFailure(error)
            if failure.status == .user, !failure.isFromImprint {
                // An argument-parser error raised while running (help, validation).
                if exitCode(for: error) == .success { exit(withError: error) }
                CommandFailure.report(CommandFailure(message: message(for: error), status: .user))
            }
            CommandFailure.report(failure)
        }
        finish(0)
    }
}

extension Imprint {
    /// Arguments the parser would misread with an unhelpful message: a negative position or
    /// count after `--insert`/`--delete` reads as an option ("Missing value").
    static func misreadArgument(_ arguments: [String]) -> CommandFailure? {
        for (option, value) in zip(arguments, arguments.dropFirst()) where ["--insert", "--delete"].contains(option) {
            if value.hasPrefix("-"), Int(value) != nil {
                return .user("\(option) takes a code-point position of 0 or more, got \(value)")
            }
        }
        return nil
    }

    /// The parser's message, with a usage hint when the command itself was not understood.
    static func usageMessage(for error: any Error, arguments: [String]) -> String {
        let text = message(for: error)
        let commands = configuration.subcommands.map { $0._commandName }
        if let first = arguments.first, !first.hasPrefix("-"), !commands.contains(first) {
            return "unknown command '\(first)'; usage: imprint <command> [options], commands: \(commands.joined(separator: ", ")) (imprint --help for more)"
        }
        if arguments.isEmpty {
            return "usage: imprint <command> [options], commands: \(commands.joined(separator: ", ")) (imprint --help for more)"
        }
        return text
    }
}

/// Flushes stdout and ends the process with `status`.
func finish(_ status: Int32) -> Never {
    fflush(nil)
    exit(status)
}
