import ArgumentParser
import Foundation
import ImprintStore

/// `imprint log <bundle> [--json]`: every change, dependencies first.
struct Log: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the changes: hash, actor/device, seq, time, message.")

    @Argument(help: "The bundle.") var bundle: String
    @Flag(help: "Print one JSON object {\"changes\": [...]}.") var json = false
    @OptionGroup var options: DeviceOptions
    @OptionGroup var incomplete: IncompleteOptions

    func run() throws {
        let doc = try incomplete.open(bundle, device: options.resolveForReading())
        let entries = doc.history()
        if json {
            printJSON(["changes": .array(entries.map { e in
                .object(["hash": .string(e.hash), "actor": .string(e.actor), "device": .optional(e.device),
                         "seq": .int(e.seq), "deviceSeq": .int(e.deviceSeq), "time": .int(e.time), "message": .optional(e.message)])
            })])
            return
        }
        let formatter = ISO8601DateFormatter()
        for e in entries {
            let when = formatter.string(from: Date(timeIntervalSince1970: Double(e.time) / 1000))
            let who = e.device ?? String(e.actor.prefix(16))
            print("\(e.hash.prefix(12))  \(who)  seq \(e.deviceSeq)  \(when)  \(e.message ?? "")")
        }
    }
}
