import ArgumentParser
import ImprintBundle

/// `imprint archive <bundle> -o <file>`: the portable single-file form (libarchive): tar + zstd,
/// tar + gzip, tar or zip, as the file name (or `--format`) says.
struct Archive: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write a bundle as one portable archive file.")

    @Argument(help: "The bundle.") var bundle: String
    @Option(name: .shortAndLong, help: "The archive file to write; its extension picks the format (.tar.zst, .tar.gz, .tar, .zip).") var output: String
    @Option(help: "The format, when the file name does not say: tar.zst, tar.gz, tar or zip.") var format: String?
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let progress = TerminalProgress(json: json)
        progress.step("archiving \(bundle)")
        var chosen: BundleArchive.Format?
        if let format {
            guard let known = BundleArchive.Format(rawValue: format) else {
                throw CommandFailure.user("unknown --format \(format): use \(BundleArchive.Format.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            chosen = known
        }
        let files = try BundleArchive.archive(bundleAt: bundle, to: output, format: chosen)
        progress.finish()
        if json { printJSON(["archive": .string(output), "files": .int(files)]) } else { print("archived \(files) files to \(output)") }
    }
}
