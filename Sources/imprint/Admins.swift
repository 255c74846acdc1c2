import ArgumentParser
import Foundation
import ImprintSync

/// `imprint admins <bundle> [<did>...] [--json]`: the DIDs that may add and remove members;
/// with DIDs, the sharer names them (replacing the list; `--none` leaves the sharer alone).
struct Admins: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show who may add and remove members, or (the sharer only) name them.",
        discussion: "The list starts with the sharer. Named admins must be members; the list goes to every member and to the Delivery Service.")

    @OptionGroup var options: SharedBundleOptions
    @Argument(help: "The DIDs to name admins (replaces the list).") var dids: [String] = []
    @Flag(help: "Name no admins: only the sharer adds and removes members.") var none = false

    func run() throws {
        guard !(none && !dids.isEmpty) else { throw CommandFailure.user("give DIDs or --none, not both") }
        let dids = self.dids, naming = none || !dids.isEmpty
        let admins = try options.withDocument(writes: naming) { doc, _ in
            naming ? try await doc.setAdmins(dids) : await doc.admins
        }
        if options.json {
            printJSON(["admins": .array(admins.map(JSON.string))])
        } else {
            for (index, did) in admins.enumerated() { print(index == 0 ? "\(did)\t(sharer)" : did) }
        }
    }
}
