import ArgumentParser
import Foundation
import ImprintSync

/// `imprint pull <bundle>`: fetches, orders, decrypts and merges what the others sent.
struct Pull: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Fetch, order, decrypt and merge what the others sent.")

    @OptionGroup var options: SharedBundleOptions

    func run() throws {
        let report = try options.withDocument { doc, sync in
            let report = try await doc.pull()
            try await sync.topUpKeyPackages()
            return report
        }
        if options.json {
            printJSON(["messages": .int(report.messages), "changes": .int(report.changes), "commits": .int(report.commits),
                       "epoch": .int(report.epoch), "seq": .int(report.seq), "gaps": .array(report.gaps.map { JSON.int($0) }),
                       "assets": .int(report.assets)])
        } else {
            var line = "pulled \(report.messages) message\(report.messages == 1 ? "" : "s") (\(report.changes) changes, \(report.commits) commits); epoch \(report.epoch), seq \(report.seq)"
            if !report.gaps.isEmpty { line += "; waiting for seq \(report.gaps.map(String.init).joined(separator: ", "))" }
            if report.assets > 0 { line += "; new shared assets (imprint asset fetch)" }
            print(line)
        }
    }
}
