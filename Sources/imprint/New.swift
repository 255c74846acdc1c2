import ArgumentParser
import ImprintStore

/// `imprint new <bundle> [--title T]`: a new bundle with an empty body.
struct New: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create a bundle holding a document with an empty body.")

    @Argument(help: "The bundle directory to create (its name ends in .imprint).") var bundle: String
    @Option(help: "The document title.") var title = ""
    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var options: DeviceOptions

    func run() throws {
        guard bundle.hasSuffix(".imprint") || bundle.hasSuffix(".imprint/") else {
            throw CommandFailure.user("a bundle name ends in .imprint: \(bundle)")
        }
        let doc = try DocumentBundle.create(at: bundle, device: try options.resolve(), title: title)
        if json {
            printJSON(["bundle": .string(bundle), "documentId": .string(doc.metadata.documentID), "title": .string(title)])
        } else {
            print("created \(bundle) (document \(doc.metadata.documentID))")
        }
    }
}
