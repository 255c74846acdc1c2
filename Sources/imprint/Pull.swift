import ArgumentParser
import Foundation
import ImprintSync

/// `imprint pull <bundle>`: fetches, orders, decrypts and merges what the others sent.
struct Pull: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Fetch, order, decrypt and merge what the others sent.")

    @Argument(help: "The bundle.") var bundle: String
    @OptionGroup var account: AccountOptions
    @OptionGroup var options: DeviceOptions
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let sync = try account.account(forBundle: bundle)
        let (path, device) = (bundle, try options.resolve())
        let report = try runBlocking {
            let doc = try await SharedDocument.open(bundleAt: path, device: device, account: sync)
            let report = try await doc.pull()
            try await sync.topUpKeyPackages()
            return report
        }
        if json {
            printJSON(["messages": .int(report.messages), "changes": .int(report.changes), "commits": .int(report.commits),
                       "epoch": .int(report.epoch), "seq": .int(report.seq), "gaps": .array(report.gaps.map { JSON.int($0) })])
        } else {
            var line = "pulled \(report.messages) message\(report.messages == 1 ? "" : "s") (\(report.changes) changes, \(report.commits) commits); epoch \(report.epoch), seq \(report.seq)"
            if !report.gaps.isEmpty { line += "; waiting for seq \(report.gaps.map(String.init).joined(separator: ", "))" }
            print(line)
        }
    }
}
