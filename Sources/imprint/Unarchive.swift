import ArgumentParser
import ImprintBundle

/// `imprint unarchive <file> -o <dir>`: extracts an archive into a new bundle directory,
/// refusing hostile archives (exit status 2).
struct Unarchive: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Extract an archive into a new bundle directory.")

    @Argument(help: "The archive file.") var archive: String
    @Option(name: .shortAndLong, help: "The bundle directory to create.") var output: String
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let progress = TerminalProgress(json: json)
        progress.step("checking and extracting \(archive)")
        let extraction = try BundleArchive.unarchive(archive, to: output)
        progress.finish()
        if json {
            printJSON(["bundle": .string(output), "files": .int(extraction.files), "bytes": .int(extraction.bytes)])
        } else {
            print("extracted \(extraction.files) files to \(output)")
        }
    }
}
