import ArgumentParser
import Foundation
import ImprintBundle
import ImprintStore

/// `imprint watch <bundle>`: keeps the bundle merged as other machines' files arrive,
/// printing one line per merge.
///
/// Copies that are merged but may still be arriving (younger than `--settle`, default 30 s)
/// are kept; the watcher syncs again once they have been quiet that long, even if no other
/// file changes, so they are removed then.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Keep the bundle merged as files change; one line per merge.")

    @Argument(help: "The bundle.") var bundle: String
    @Option(help: "Stop after this many seconds (default: run until interrupted).") var timeout: Double?
    @Option(help: "Re-check interval in seconds when no file event arrives.") var poll: Double = 2
    @Option(help: "Seconds a conflict copy must be untouched before it may be removed once merged.") var settle: Double = SettlePolicy.watch.seconds
    @OptionGroup var options: DeviceOptions

    func run() throws {
        let device = try options.resolve()
        let policy = try SettlePolicy(seconds: settle)
        guard poll.isFinite, poll > 0, poll <= 3600 else { throw CommandFailure.user("--poll must be between 0 and 3600 seconds") }
        let watcher = DirectoryWatcher<BundleFingerprint>(layout: BundleLayout(root: bundle), ignoring: device, pollInterval: .milliseconds(Int(poll * 1000)))
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: .milliseconds(Int($0 * 1000))) }
        var fingerprint = try watcher.fingerprint()
        var doc: DocumentBundle?
        var lastKept: [String: String] = [:]
        while true {
            var waiting = false
            do {
                if doc == nil { doc = try DocumentBundle.open(at: bundle, device: device) }
                let report = try mergeOnce(doc!, settle: policy, previouslyKept: lastKept)
                lastKept = report.kept
                waiting = !report.kept.isEmpty || !report.incomplete.isEmpty
            } catch StoreError.incomplete(let reason) {
                // The bundle (its metadata.json, or the creator's log) has not arrived yet.
                FileHandle.standardError.write(Data("waiting: \(reason)\n".utf8))
            }
            var wait: Duration?
            if let deadline {
                wait = deadline - clock.now
                if wait! <= .zero { return }
            }
            // Copies kept only because they are young are removable once they have settled:
            // come back then even if nothing else changes.
            if waiting {
                let retry = policy.quietPeriod + .milliseconds(200)
                wait = wait.map { min($0, retry) } ?? retry
            }
            if let next = try watcher.waitForChange(since: fingerprint, timeout: wait) {
                fingerprint = next
            } else if !waiting {
                return
            }
        }
    }

    private func mergeOnce(_ doc: DocumentBundle, settle: SettlePolicy, previouslyKept: [String: String]) throws -> SyncReport {
        let report = try doc.sync(settle: settle)
        reportWarnings(doc)
        if let reason = doc.incompleteness { warnIncomplete(reason) }
        let newlyKept = report.kept.filter { previouslyKept[$0.key] != $0.value }
        guard report.changesMerged > 0 || !report.removed.isEmpty || !newlyKept.isEmpty else { return report }
        let stamp = ISO8601DateFormatter().string(from: Date())
        print("\(stamp) \(syncLine(report)); body \(try doc.text().unicodeScalars.count) code points")
        for (path, reason) in newlyKept.sorted(by: { $0.key < $1.key }) {
            print("  kept \(path): \(reason)")
        }
        fflush(nil)
        return report
    }
}
