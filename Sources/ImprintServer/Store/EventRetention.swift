import Foundation
import Logging
import ServiceLifecycle
import ImprintEncoding

/// Deletes events older than the configured retention, so the event tables hold a window of
/// notifications instead of the whole history of every convo.
///
/// Events only tell subscribers that something happened; what happened stays readable through
/// `getMessages` (until compaction, `CompactionPoint`) and `getWelcome` (until confirmed), so
/// a subscriber that resumes from a cursor older than the window loses no message, only the
/// nudges it would have acted on, and its next pull catches up. Each sweep deletes in batches
/// of `batch` payloads (one short transaction each, so sends are never held up for long) until
/// nothing older than the cutoff is left, then sleeps for `sweep`. A failed sweep is logged and
/// tried again at the next one. Runs beside the HTTP server and ends with it.
struct EventRetention: Service {
    let store: any DeliveryStore
    let retention: Duration
    let sweep: Duration
    var batch = 5_000
    let logger: Logger

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let purged = try await purgeNow(now: Date())
                if purged > 0 { logger.info("events purged", metadata: ["payloads": "\(purged)"]) }
            } catch {
                logger.warning("event purge failed", metadata: ["error": "\(error)"])
            }
            // Ends the sleep (with CancellationError) as soon as the server begins to shut down.
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: sweep) }
            } catch {
                return
            }
        }
    }

    /// Deletes every event stored before `now - retention`; returns how many payloads went.
    func purgeNow(now: Date) async throws -> Int {
        let cutoff = now.addingTimeInterval(-retention.inSeconds)
        var total = 0
        while true {
            let purged = try await store.purgeEvents(before: cutoff, limit: batch)
            total += purged
            if purged < batch { return total }
        }
    }
}
