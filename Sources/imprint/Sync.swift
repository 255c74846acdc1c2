import ArgumentParser
import ImprintStore

/// `imprint sync <bundle>`: merges every device log and conflict copy now, then tidies.
struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Merge every device log and conflict copy (file and bundle level) now, then tidy them safely.")

    @Argument(help: "The bundle.") var bundle: String
    @Flag(help: "Also write this device's snapshot and compact its log.") var compact = false
    @Flag(help: "Print one JSON object.") var json = false
    @OptionGroup var options: DeviceOptions

    func run() throws {
        let progress = TerminalProgress(json: json)
        progress.step("opening \(bundle): reading every device log and conflict copy")
        let doc = try DocumentBundle.open(at: bundle, device: try options.resolve())
        progress.step("merging, writing this device's snapshot, tidying conflict copies")
        let report = try doc.sync(compact: compact)
        progress.finish()
        reportWarnings(doc)
        if json {
            printJSON(syncJSON(report))
        } else {
            print(syncLine(report))
        }
    }
}

/// The JSON fields describing a sync.
func syncJSON(_ report: SyncReport) -> [String: JSON] {
    ["merged": .int(report.changesMerged), "persisted": .int(report.changesPersisted),
     "removed": .array(report.removed.map(JSON.string)),
     "kept": .object(report.kept.mapValues(JSON.string)), "snapshot": .bool(report.snapshotWritten)]
}

/// One human line describing a sync.
func syncLine(_ report: SyncReport) -> String {
    var line = "merged \(report.changesMerged) changes, removed \(report.removed.count) conflict copies"
    if !report.kept.isEmpty { line += ", kept \(report.kept.count)" }
    return line
}
