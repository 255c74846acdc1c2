import ArgumentParser
import Foundation
import ImprintSync

/// `imprint invite <bundle> <did>...`: adds members in one commit.
struct Invite: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add members (one commit); they can join at once.")

    @Argument(help: "The bundle.") var bundle: String
    @Argument(help: "The DIDs to add.") var dids: [String]
    @OptionGroup var account: AccountOptions
    @OptionGroup var options: DeviceOptions
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        guard !dids.isEmpty else { throw CommandFailure.user("name at least one DID to invite") }
        let sync = try account.account(forBundle: bundle)
        let (path, device, dids) = (bundle, try options.resolve(), self.dids)
        let (added, convo) = try runBlocking {
            let doc = try await SharedDocument.open(bundleAt: path, device: device, account: sync)
            return (try await doc.invite(dids), doc.convoId)
        }
        if json {
            printJSON(["convoId": .string(convo), "added": .array(added.map(JSON.string))])
        } else {
            for did in added { print("invited \(did); they join with: imprint join \(convo) --server \(sync.serverURL) -o <bundle>") }
            if added.isEmpty { print("every DID named is already a member") }
        }
    }
}
