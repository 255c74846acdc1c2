import Foundation
import Logging

/// The server's own compaction: every `interval`, each shared zone that is due
/// (`ZoneServiceStore.zonesToCompact`) is compacted (`ZoneCompaction`), so zones shrink
/// without any client asking. A failed run is logged and tried again at the next interval.
final class ZoneCompactor: Sendable {
    private let task: Task<Void, Never>

    init(store: any ZoneServiceStore, interval: Duration, logger: Logger = Logger(label: "imprint.zone.compaction")) {
        task = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { return }
                do {
                    for zone in try await store.zonesToCompact(limit: 100) where !Task.isCancelled {
                        let run = try await store.compact(zone, caller: nil, now: Date())
                        logger.info("compacted", metadata: [
                            "zone": "\(zone.raw)", "before": "\(run.compactedBefore ?? 0)",
                            "records": "\(run.deletedRecords)", "bytes": "\(run.freedBytes)", "messages": "\(run.forgottenMessages)",
                        ])
                    }
                } catch is CancellationError {
                    return  // stopping
                } catch {
                    logger.warning("compaction failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Stops after the run under way, if any, has finished.
    func stop() async {
        task.cancel()
        await task.value
    }
}
