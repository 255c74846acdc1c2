import ArgumentParser
import Foundation
import ImprintSync

/// `imprint join <convoId> --server URL -o <bundle>`: joins from the Welcome and materializes
/// the document into a new bundle.
struct Join: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Join a shared document from its Welcome into a new bundle.")

    @Argument(help: "The convo id (printed by imprint share).") var convoId: String
    @Option(name: .short, help: "The new bundle's path.") var output: String
    @OptionGroup var account: AccountOptions
    @OptionGroup var options: DeviceOptions
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let sync = try account.account()
        let (convo, path, device) = (convoId, output, try options.resolve())
        let text = try runBlocking {
            let doc = try await SharedDocument.join(convoId: convo, account: sync, bundleAt: path, device: device)
            return try await doc.text()
        }
        if json {
            printJSON(["convoId": .string(convo), "bundle": .string(path), "characters": .int(text.unicodeScalars.count)])
        } else {
            print("joined \(convo) into \(path) (\(text.unicodeScalars.count) characters)")
        }
    }
}
