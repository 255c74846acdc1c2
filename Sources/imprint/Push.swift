import ArgumentParser
import Foundation
import ImprintSync

/// `imprint push <bundle>`: sends the local changes the group has not seen.
struct Push: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send local changes, encrypted, to the shared document.")

    @Argument(help: "The bundle.") var bundle: String
    @OptionGroup var account: AccountOptions
    @OptionGroup var options: DeviceOptions
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let sync = try account.account(forBundle: bundle)
        let (path, device) = (bundle, try options.resolve())
        let report = try runBlocking {
            let doc = try await SharedDocument.open(bundleAt: path, device: device, account: sync)
            let report = try await doc.push()
            try await sync.topUpKeyPackages()
            return report
        }
        if json {
            printJSON(["changes": .int(report.changes), "seq": report.seq.map { JSON.int($0) } ?? .null, "bytes": .int(report.bytes)])
        } else if let seq = report.seq {
            print("pushed \(report.changes) change\(report.changes == 1 ? "" : "s") as seq \(seq) (\(report.bytes) bytes of ciphertext)")
        } else {
            print("nothing to push")
        }
    }
}
