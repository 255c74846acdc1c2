import ArgumentParser
import ImprintStore

/// `imprint show <bundle> --json`: the whole document as JSON.
struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the whole document as JSON.")

    @Argument(help: "The bundle.") var bundle: String
    @Flag(help: "Print one JSON object (the default and only form).") var json = false
    @OptionGroup var options: DeviceOptions

    func run() throws {
        let doc = try DocumentBundle.open(at: bundle, device: options.resolveForReading())
        reportWarnings(doc)
        print(try doc.jsonValue().serialized)
    }
}
