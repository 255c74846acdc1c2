import ArgumentParser
import Foundation
import ImprintSync

/// `imprint invite <bundle> <did>...`: adds members in one commit.
struct Invite: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add members (one commit); they can join at once.")

    @OptionGroup var options: SharedBundleOptions
    @Argument(help: "The DIDs to add.") var dids: [String]

    func run() throws {
        guard !dids.isEmpty else { throw CommandFailure.user("name at least one DID to invite") }
        let dids = self.dids
        let (added, convo, server) = try options.withDocument { doc, sync in (try await doc.invite(dids), doc.convoId, sync.serverURL) }
        if options.json {
            printJSON(["convoId": .string(convo), "added": .array(added.map(JSON.string))])
        } else {
            for did in added { print("invited \(did); they join with: imprint join \(convo) --server \(server) -o <bundle>") }
            if added.isEmpty { print("every DID named is already a member") }
        }
    }
}
