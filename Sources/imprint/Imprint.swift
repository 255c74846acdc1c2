import ArgumentParser

@main
struct Imprint: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imprint",
        abstract: "Collaborative documents with end-to-end encryption.",
        subcommands: [Demo.self, MLS.self]
    )
}
