import ArgumentParser
import ImprintBundle

/// `imprint archive <bundle> -o <file>`: the portable single-file form (libarchive, zstd).
struct Archive: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write a bundle as one portable archive file.")

    @Argument(help: "The bundle.") var bundle: String
    @Option(name: .shortAndLong, help: "The archive file to write.") var output: String
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let progress = TerminalProgress(json: json)
        progress.step("archiving \(bundle)")
        let files = try BundleArchive.archive(bundleAt: bundle, to: output)
        progress.finish()
        if json { printJSON(["archive": .string(output), "files": .int(files)]) } else { print("archived \(files) files to \(output)") }
    }
}
