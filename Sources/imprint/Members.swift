import ArgumentParser
import Foundation
import ImprintSync

/// `imprint members <bundle> [--json]`: the roster with the epoch.
struct Members: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the members (MLS roster, credentials checked) and the epoch.")

    @OptionGroup var options: SharedBundleOptions

    func run() throws {
        let (epoch, members) = try options.withDocument(writes: false) { doc, _ in try await doc.members() }
        if options.json {
            printJSON(["epoch": .int(epoch), "members": .array(members.map { member in
                .object(["did": .string(member.did), "leafIndex": .int(member.leafIndex), "admin": .bool(member.isAdmin),
                         "self": .bool(member.isSelf),
                         "joinedAt": .optional(member.joinedAt.map { ISO8601DateFormatter().string(from: $0) })])
            })])
        } else {
            print("epoch \(epoch)")
            for member in members {
                print("\(member.leafIndex)\t\(member.did)\(member.isAdmin ? "\tadmin" : "")\(member.isSelf ? "\t(you)" : "")")
            }
        }
    }
}
