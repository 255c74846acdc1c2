import ArgumentParser
import Foundation
import ImprintStore

/// `imprint text <bundle>`: the body text exactly, no added newline.
struct Text: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the body text exactly (no added newline).")

    @Argument(help: "The bundle.") var bundle: String
    @Flag(help: "Print one JSON object {\"text\": ...} instead.") var json = false
    @OptionGroup var options: DeviceOptions
    @OptionGroup var incomplete: IncompleteOptions

    func run() throws {
        let doc = try incomplete.open(bundle, device: options.resolveForReading())
        let text = try doc.text()
        if json { printJSON(["text": .string(text)]) } else { writeOut(text) }
    }
}

/// Prints a bundle's load warnings on stderr, one `warning:` line each.
func reportWarnings(_ doc: DocumentBundle) {
    for warning in doc.warnings {
        FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
    }
}
