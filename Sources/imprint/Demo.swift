import ArgumentParser

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what Imprint can do today.")
    func run() async throws {
        print("Imprint: engine under construction")
    }
}
