import ArgumentParser
import ImprintStore

/// `imprint show <bundle> --json`: the whole document as JSON.
struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the whole document as JSON.")

    @Argument(help: "The bundle.") var bundle: String
    @Flag(help: "Print one JSON object (the default and only form).") var json = false
    @OptionGroup var options: DeviceOptions
    @OptionGroup var incomplete: IncompleteOptions

    func run() throws {
        let doc = try incomplete.open(bundle, device: options.resolveForReading())
        print(try doc.jsonValue().serialized)
    }
}
