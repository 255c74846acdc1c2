import ArgumentParser
import Foundation
import ImprintCRDT
import ImprintSync

/// `imprint share <bundle> --server URL`: makes the document collaborative; prints the convo
/// id alone on the last line.
struct Share: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Share a document: MLS group, convo, shared zone, first encrypted snapshot.")

    @Argument(help: "The bundle.") var bundle: String
    @OptionGroup var account: AccountOptions
    @OptionGroup var options: DeviceOptions
    @Option(name: .customLong("mailbox-threshold"),
            help: "Past this many members, also deliver every record to each recipient's inbox zone (default: never).")
    var mailboxThreshold: Int?
    @Option(help: "What members who join receive: full (the whole history, deleted text included) or current (the current state only).")
    var history: SharedHistory = .full
    @Flag(help: "Print one JSON object.") var json = false

    enum SharedHistory: String, ExpressibleByArgument, CaseIterable {
        case full, current
    }

    func validate() throws {
        if let mailboxThreshold, mailboxThreshold < 1 { throw ValidationError("--mailbox-threshold must be at least 1") }
    }

    func run() throws {
        let sync = try account.account()
        let device = try options.resolve()
        let path = bundle
        let threshold = mailboxThreshold
        let retention: HistoryRetention = history == .current ? .redacted : .full
        let convo = try runBlocking {
            try await SharedDocument.share(bundleAt: path, device: device, account: sync, mailboxThreshold: threshold,
                                           history: retention).convoId
        }
        if json {
            printJSON(["convoId": .string(convo), "server": .string(sync.serverURL), "did": .string(sync.did)])
        } else {
            print("shared \(bundle) on \(sync.serverURL); invite with: imprint invite \(bundle) <did>")
            print(convo)
        }
    }
}
