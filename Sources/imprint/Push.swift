import ArgumentParser
import Foundation
import ImprintSync

/// `imprint push <bundle>`: sends the local changes the group has not seen.
struct Push: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send local changes, encrypted, to the shared document.")

    @OptionGroup var options: SharedBundleOptions

    func run() throws {
        let report = try options.withDocument { doc, sync in
            let report = try await doc.push()
            try await sync.topUpKeyPackages()
            return report
        }
        if options.json {
            printJSON(["changes": .int(report.changes), "seq": report.seq.map { JSON.int($0) } ?? .null, "bytes": .int(report.bytes),
                       "assets": .int(report.assets)])
        } else {
            if report.assets > 0 { print("shared \(report.assets) asset\(report.assets == 1 ? "" : "s"), encrypted") }
            if let seq = report.seq {
                print("pushed \(report.changes) change\(report.changes == 1 ? "" : "s") as seq \(seq) (\(report.bytes) bytes of ciphertext)")
            } else if report.assets == 0 {
                print("nothing to push")
            }
        }
    }
}
