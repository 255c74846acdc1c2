import ArgumentParser
import Foundation
import ImprintBundle
import ImprintStore

/// `imprint watch <bundle>`: keeps the bundle merged as other machines' files arrive,
/// printing one line per merge.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Keep the bundle merged as files change; one line per merge.")

    @Argument(help: "The bundle.") var bundle: String
    @Option(help: "Stop after this many seconds (default: run until interrupted).") var timeout: Double?
    @Option(help: "Re-check interval in seconds when no file event arrives.") var poll: Double = 2
    @OptionGroup var options: DeviceOptions

    func run() throws {
        let device = try options.resolve()
        let watcher = DirectoryWatcher<BundleFingerprint>(layout: BundleLayout(root: bundle), ignoring: device, pollInterval: .milliseconds(Int(poll * 1000)))
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: .milliseconds(Int($0 * 1000))) }
        var fingerprint = try watcher.fingerprint()
        var doc: DocumentBundle?
        while true {
            do {
                if let doc {
                    try mergeOnce(doc)
                } else {
                    let opened = try DocumentBundle.open(at: bundle, device: device)
                    doc = opened
                    try mergeOnce(opened)
                }
            } catch StoreError.incomplete(let reason) {
                // The creator's log has not arrived yet: wait for more files.
                FileHandle.standardError.write(Data("waiting: \(reason)\n".utf8))
            }
            var wait: Duration?
            if let deadline {
                wait = deadline - clock.now
                if wait! <= .zero { return }
            }
            guard let next = try watcher.waitForChange(since: fingerprint, timeout: wait) else { return }
            fingerprint = next
        }
    }

    private func mergeOnce(_ doc: DocumentBundle) throws {
        let report = try doc.sync()
        reportWarnings(doc)
        guard report.changesMerged > 0 || !report.removed.isEmpty else { return }
        let stamp = ISO8601DateFormatter().string(from: Date())
        print("\(stamp) \(syncLine(report)); body \(try doc.text().unicodeScalars.count) code points")
        fflush(nil)
    }
}
