import ArgumentParser
import Foundation
import ImprintSync

/// `imprint leave <bundle>`: sends what is unsent, leaves, deletes this identity's keys for it.
struct Leave: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Leave a shared document (the bundle stays).")

    @Argument(help: "The bundle.") var bundle: String
    @OptionGroup var account: AccountOptions
    @OptionGroup var options: DeviceOptions
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let sync = try account.account(forBundle: bundle)
        let (path, device) = (bundle, try options.resolve())
        let convo = try runBlocking {
            let doc = try await SharedDocument.open(bundleAt: path, device: device, account: sync)
            try await doc.leave()
            return doc.convoId
        }
        if json { printJSON(["left": .string(convo)]) } else { print("left \(convo); \(bundle) keeps what was received") }
    }
}
