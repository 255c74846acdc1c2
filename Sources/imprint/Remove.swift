import ArgumentParser
import Foundation
import ImprintSync

/// `imprint remove <bundle> <did>`: a removal commit; the removed member reads nothing newer.
struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove a member (one commit); they read nothing newer.")

    @OptionGroup var options: SharedBundleOptions
    @Argument(help: "The member's DID.") var did: String

    func run() throws {
        let member = did
        let epoch = try options.withDocument { doc, _ in
            try await doc.remove(member)
            return try await doc.members().epoch
        }
        if options.json { printJSON(["removed": .string(member), "epoch": .int(epoch)]) } else { print("removed \(member); epoch \(epoch)") }
    }
}
