import ArgumentParser
import Crypto
import EditingTraces
import Foundation
import ImprintCRDT

/// `imprint-bench trace`: replays an editing trace and reports medians (contract in
/// `shared/contracts/cli.md`).
struct TraceBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace", abstract: "Replay an editing trace: apply, merge, save, load.")

    @Argument(help: "A trace file (.json or .json.gz).") var path: String
    @Option(help: "Runs; medians are reported.") var runs = 5
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let trace = try EditingTrace.load(path: path)
        var apply: [Double] = []
        var merge: [Double] = []
        var load: [Double] = []
        var saveBytes = 0
        var finalText = ""
        for _ in 0..<max(1, runs) {
            let (t1, doc) = try Clock.measure { try TraceReplay.replay(trace) }
            apply.append(t1)
            let text = try TraceReplay.text(of: doc)
            finalText = text
            let saved = doc.save()
            saveBytes = saved.count
            let (t2, _) = try Clock.measure { () -> String in
                let fresh = Document(actor: ActorID.named("merge-target"))
                try fresh.merge(saved)
                return try TraceReplay.text(of: fresh)
            }
            merge.append(t2)
            let (t3, _) = try Clock.measure { () -> String in
                let loaded = try Document.load(saved)
                return try TraceReplay.text(of: loaded)
            }
            load.append(t3)
        }
        let sha = SHA256.hash(data: Array(finalText.utf8)).map { String(format: "%02x", $0) }.joined()
        let result: [(String, String)] = [
            ("trace", "\"\(trace.name)\""),
            ("patches", "\(trace.patchCount)"),
            ("apply_ms", Clock.format(Clock.median(apply))),
            ("merge_ms", Clock.format(Clock.median(merge))),
            ("save_bytes", "\(saveBytes)"),
            ("load_ms", Clock.format(Clock.median(load))),
            ("peak_rss_mb", Clock.format(Clock.peakRSSMegabytes())),
            ("final_sha256", "\"\(sha)\""),
            ("matches_end_content", finalText == trace.endContent ? "true" : "false"),
        ]
        if json {
            print("{" + result.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            for (k, v) in result { print("\(k.padding(toLength: 20, withPad: " ", startingAt: 0)) \(v)") }
        }
        if finalText != trace.endContent { throw ExitCode(1) }
    }
}
