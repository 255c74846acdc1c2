import ArgumentParser
import ImprintStore

/// `imprint merge <bundle> <other>`: merges another copy (bundle, archive or saved document).
struct Merge: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Merge another copy in: a bundle, an archive, or a saved document.")

    @Argument(help: "The bundle to merge into.") var bundle: String
    @Argument(help: "The other copy.") var other: String
    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var options: DeviceOptions

    func run() throws {
        let progress = TerminalProgress(json: json)
        progress.step("opening \(bundle)")
        let doc = try DocumentBundle.open(at: bundle, device: try options.resolve())
        progress.step("merging \(other)")
        let report = try doc.merge(from: other)
        progress.finish()
        reportWarnings(doc)
        if json {
            printJSON(["merged": .int(report.changesMerged), "persisted": .int(report.changesPersisted)])
        } else {
            print("merged \(report.changesMerged) changes from \(other)")
        }
    }
}
