import ArgumentParser
import Foundation
import ImprintSync

/// `imprint members <bundle> [--json]`: the roster with the epoch.
struct Members: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the members (MLS roster, credentials checked) and the epoch.")

    @Argument(help: "The bundle.") var bundle: String
    @OptionGroup var account: AccountOptions
    @OptionGroup var options: DeviceOptions
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let sync = try account.account(forBundle: bundle)
        let (path, device) = (bundle, options.resolveForReading())
        let (epoch, members) = try runBlocking {
            let doc = try await SharedDocument.open(bundleAt: path, device: device, account: sync)
            return try await doc.members()
        }
        if json {
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
