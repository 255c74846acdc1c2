import ArgumentParser
import Foundation
import ImprintSync

/// `imprint remove <bundle> <did>`: a removal commit; the removed member reads nothing newer.
struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove a member (one commit); they read nothing newer.")

    @Argument(help: "The bundle.") var bundle: String
    @Argument(help: "The member's DID.") var did: String
    @OptionGroup var account: AccountOptions
    @OptionGroup var options: DeviceOptions
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let sync = try account.account(forBundle: bundle)
        let (path, device, member) = (bundle, try options.resolve(), did)
        let epoch = try runBlocking {
            let doc = try await SharedDocument.open(bundleAt: path, device: device, account: sync)
            try await doc.remove(member)
            return try await doc.members().epoch
        }
        if json { printJSON(["removed": .string(member), "epoch": .int(epoch)]) } else { print("removed \(member); epoch \(epoch)") }
    }
}
