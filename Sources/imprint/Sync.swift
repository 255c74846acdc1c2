import ArgumentParser
import ImprintBundle
import ImprintStore
import ImprintEncoding

/// `imprint sync <bundle>`: merges every device log and conflict copy now, then tidies.
struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Merge every device log and conflict copy (file and bundle level) now, then tidy them safely.")

    @Argument(help: "The bundle.") var bundle: String
    @Flag(help: "Also write this device's snapshot and compact its log.") var compact = false
    @Flag(help: "Print one JSON object.") var json = false
    @Option(help: "Seconds a conflict copy must be untouched before it may be removed once merged.") var settle: Double = SettlePolicy.sync.seconds
    @OptionGroup var options: DeviceOptions

    func run() throws {
        let progress = TerminalProgress(json: json)
        progress.step("opening \(bundle): reading every device log and conflict copy")
        let doc = try DocumentBundle.open(at: bundle, device: try options.resolve())
        progress.step("merging, writing this device's snapshot, tidying conflict copies")
        let report = try doc.sync(compact: compact, settle: try SettlePolicy(seconds: settle))
        progress.finish()
        reportWarnings(doc)
        if let reason = doc.incompleteness { warnIncomplete(reason) }
        if json {
            var fields = syncJSON(report)
            fields["warnings"] = .array(doc.warnings.map(JSON.string))
            printJSON(fields)
        } else {
            print(syncLine(report))
            for (path, reason) in report.kept.sorted(by: { $0.key < $1.key }) {
                print("  kept \(path): \(reason)")
            }
        }
    }
}

/// The JSON fields describing a sync: `merged` (changes new to this device), `mergedFrom`
/// (file or bundle → changes), `persisted`, `removed` (paths), `kept` (path → reason),
/// `incomplete` (files still on their way), `snapshot`.
func syncJSON(_ report: SyncReport) -> [String: JSON] {
    ["merged": .int(report.changesMerged), "persisted": .int(report.changesPersisted),
     "mergedFrom": .object(report.mergedFrom.mapValues { .int($0) }),
     "removed": .array(report.removed.map(JSON.string)),
     "kept": .object(report.kept.mapValues(JSON.string)),
     "incomplete": .array(report.incomplete.map(JSON.string)),
     "quarantined": .array(report.quarantined.map(JSON.string)),
     "snapshot": .bool(report.snapshotWritten)]
}

/// One human line describing a sync.
func syncLine(_ report: SyncReport) -> String {
    var line = "merged \(counted(report.changesMerged, "change")), removed \(counted(report.removed.count, "conflict copy", plural: "conflict copies"))"
    if !report.kept.isEmpty { line += ", kept \(counted(report.kept.count, "copy", plural: "copies")) (not yet wholly merged or still arriving)" }
    if !report.incomplete.isEmpty { line += ", \(counted(report.incomplete.count, "file")) still arriving" }
    if !report.quarantined.isEmpty { line += ", \(counted(report.quarantined.count, "damaged log")) quarantined" }
    return line
}

/// "1 change", "2 changes".
func counted(_ count: Int, _ singular: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}

extension SettlePolicy {
    /// The quiet period in seconds (the CLI's `--settle` unit).
    var seconds: Double { quietPeriod.inSeconds }

    /// A policy from a command-line number of seconds.
    init(seconds: Double) throws {
        guard seconds.isFinite, seconds >= 0, seconds <= 86_400 else {
            throw CommandFailure.user("--settle must be between 0 and 86400 seconds, got \(seconds)")
        }
        self.init(quietPeriod: .milliseconds(Int64(seconds * 1000)))
    }
}
