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
        subcommands: [
            New.self, Text.self, Show.self, Edit.self, Log.self, Merge.self, Sync.self, Watch.self,
            Archive.self, Unarchive.self, Asset.self, MLS.self, Demo.self,
        ]
    )

    /// Runs the command with the exit-status contract of contracts/cli.md: 0 success, 1 usage
    /// or user error, 2 corrupt or hostile data, each failure one `error:` line on stderr.
    static func main() {
        let command: ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }
            CommandFailure.report(CommandFailure(message: message(for: error), status: .user))
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

/// Flushes stdout and ends the process with `status`.
func finish(_ status: Int32) -> Never {
    fflush(nil)
    exit(status)
}
