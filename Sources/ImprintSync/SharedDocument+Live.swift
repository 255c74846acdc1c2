import Foundation
import ImprintDelivery
import ImprintFiles

/// One thing `live` did or saw.
public enum LiveEvent: Sendable, Hashable {
    /// Local edits sent.
    case pushed(PushReport)
    /// Others' messages merged.
    case pulled(PullReport)
    /// The event stream dropped; reconnecting after `delay`.
    case reconnecting(reason: String, delay: Duration)
    /// A pull or push failed and will be tried again (the failure, one line).
    case retrying(String)
    /// Another member's presence, with its caret's index in this member's body text now
    /// (nil: none given, or on text not received yet).
    case presence(PresenceUpdate, index: Int?)
}

extension SharedDocument {
    /// Stays connected until the consumer stops iterating: pushes local edits as they land
    /// in the bundle (any process writing this device's log, a folder-sync tool bringing
    /// another device's), merges the others' as the Delivery Service announces them.
    ///
    /// Announcements come from the Delivery Service's event stream (resumed from its last
    /// cursor after a drop) and from the shared zone's change notifications (a record may
    /// arrive just after its message is announced), each reconnecting with exponential
    /// backoff (0.5 s doubling to 30 s). The others' previews (docs/sync.md, "Previews") are
    /// merged as they are relayed, so an edit shows before its durable copy arrives; the bundle
    /// is checked every `pollInterval` (a cheap stamp of its files), and a pull also runs every
    /// `pullInterval` in case an announcement was missed. The other members' presence
    /// (``presenceUpdates()``) comes as `.presence` events. The stream ends with
    /// ``SyncError/Code/removed`` when this identity is removed.
    public nonisolated func live(pollInterval: Duration = .milliseconds(250), pullInterval: Duration = .seconds(30))
        -> AsyncThrowingStream<LiveEvent, any Error>
    {
        let (wakes, waker) = AsyncStream.makeStream(of: LiveWake.self, bufferingPolicy: .bufferingNewest(8))
        return AsyncThrowingStream { continuation in
            let listener = Task { await self.listen(waker: waker, events: continuation) }
            let ephemeralListener = Task { await self.listenToEphemeral(events: continuation) }
            let zoneListener = Task { await self.listenToZone(waker: waker, events: continuation) }
            let ticker = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: pollInterval)
                    waker.yield(.tick)
                }
            }
            let worker = Task {
                do {
                    try await self.work(wakes: wakes, waker: waker, pullInterval: pullInterval, events: continuation)
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                listener.cancel()
                ephemeralListener.cancel()
                zoneListener.cancel()
                ticker.cancel()
                worker.cancel()
                waker.finish()
            }
        }
    }

    /// Follows the Delivery Service's events for this convo, reconnecting with backoff.
    nonisolated func listen(waker: AsyncStream<LiveWake>.Continuation, events: AsyncThrowingStream<LiveEvent, any Error>.Continuation) async {
        var cursor: Int64?
        var delay = Duration.milliseconds(500)
        while !Task.isCancelled {
            do {
                for try await event in account.delivery.subscribeConvoEvents(cursor: cursor) {
                    cursor = event.cursor
                    delay = .milliseconds(500)
                    if event.payload.convoId == convoId, !isOwnApplicationMessage(event.payload) { waker.yield(.announced) }
                }
            } catch {
                if Task.isCancelled { return }
                events.yield(.reconnecting(reason: "\(error)", delay: delay))
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(30))
            waker.yield(.announced) // catch up on what the drop may have hidden
        }
    }

    /// Follows the other members' ephemeral messages, reconnecting with backoff: their
    /// presence (yielded as `.presence`) and previews of their change sets (merged at once:
    /// `applyPreview`). Kinds this version does not know are skipped.
    ///
    /// Each connection is the member's ephemeral socket when the Delivery Service has one
    /// (v1.5): while it is open, this member's previews and presence go out through it too
    /// (`SharedDocument+EphemeralChannel`). Otherwise, or when opening it fails, the
    /// `subscribeEphemeral` stream, with sends by `sendEphemeral`.
    nonisolated func listenToEphemeral(events: AsyncThrowingStream<LiveEvent, any Error>.Continuation) async {
        var delay = Duration.milliseconds(500)
        while !Task.isCancelled {
            let channel = account.options.ephemeralSocket ? try? await account.delivery.openEphemeralChannel(convoId: convoId) : nil
            if let channel { await adoptEphemeralChannel(channel) }
            do {
                for try await message in channel?.messages ?? account.delivery.subscribeEphemeral(convoId: convoId) {
                    delay = .milliseconds(500)
                    await receiveEphemeral(message, events: events)
                }
            } catch {
                if !Task.isCancelled { events.yield(.reconnecting(reason: "presence: \(error)", delay: delay)) }
            }
            if let channel { await releaseEphemeralChannel(channel) }
            if Task.isCancelled { return }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(30))
        }
    }

    /// One ephemeral message of another member: a preview merged, a presence yielded.
    nonisolated func receiveEphemeral(_ message: EphemeralMessage, events: AsyncThrowingStream<LiveEvent, any Error>.Continuation) async {
        switch message.effectiveKind {
        case EphemeralKind.preview:
            await self.applyPreview(message)
        case EphemeralKind.presence:
            guard let update = await self.openPresence(message) else { return }
            var index: Int?
            if let cursor = update.cursor { index = (try? await self.index(of: cursor)) ?? nil }
            events.yield(.presence(update, index: index))
        default:
            return
        }
    }

    /// Follows the shared zone's change notifications: a message the Delivery Service
    /// announced may reach the zone a moment later (the sender saves its records after
    /// `sendMessage`), and the record's arrival is what fills the gap.
    nonisolated func listenToZone(waker: AsyncStream<LiveWake>.Continuation, events: AsyncThrowingStream<LiveEvent, any Error>.Continuation) async {
        var delay = Duration.milliseconds(500)
        while !Task.isCancelled {
            do {
                for try await _ in try await account.zones.subscribe(zoneId: zoneId) {
                    delay = .milliseconds(500)
                    waker.yield(.recordsArrived)
                }
            } catch {
                if Task.isCancelled { return }
                events.yield(.reconnecting(reason: "zone: \(error)", delay: delay))
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(30))
            waker.yield(.announced)
        }
    }

    /// Pulls when announced (and every `pullInterval`), pushes when the bundle's logs changed.
    func work(wakes: AsyncStream<LiveWake>, waker: AsyncStream<LiveWake>.Continuation, pullInterval: Duration,
              events: AsyncThrowingStream<LiveEvent, any Error>.Continuation) async throws {
        let logs = bundlePath + "/changes"
        var stamp: TreeStamp?
        var lastPull = ContinuousClock.now
        var pullDue = true
        var retryDelay = Duration.milliseconds(200)
        // Whether the last pull found announced messages whose records were not in the zone
        // yet: only then is a zone notification news (most are this member's own saves).
        var waitingForRecords = false
        for await wake in wakes {
            if Task.isCancelled { return }
            if wake == .announced || (wake == .recordsArrived && waitingForRecords) { pullDue = true }
            do {
                if pullDue || ContinuousClock.now - lastPull >= pullInterval {
                    pullDue = false
                    lastPull = .now
                    let report = try await livePull()
                    waitingForRecords = !report.gaps.isEmpty
                    if report.messages > 0 || report.commits > 0 { events.yield(.pulled(report)) }
                }
                let now = TreeStamp.take(logs)
                if now != stamp {
                    let report = try await push()
                    if report.changes > 0 || report.assets > 0 { events.yield(.pushed(report)) }
                    stamp = TreeStamp.take(logs)
                }
            } catch let error as SyncError where error.code == .removed {
                throw error
            } catch {
                if Task.isCancelled { return }
                events.yield(.retrying("\(error)"))
                pullDue = true
                stamp = nil
                // Try again after a pause even if nothing else wakes us (a refused or
                // rate-limited request is not followed by an announcement).
                let pause = retryDelay
                retryDelay = min(retryDelay * 2, .seconds(30))
                Task {
                    try? await Task.sleep(for: pause)
                    waker.yield(.tick)
                }
                continue
            }
            retryDelay = .milliseconds(200)
        }
    }
}

/// Why `live`'s worker woke up.
enum LiveWake: Sendable, Equatable {
    /// The Delivery Service announced a message or membership change of the convo (not one
    /// of this member's own application messages: there is nothing to pull for those).
    case announced
    /// The shared zone changed: records may have arrived for announced messages.
    case recordsArrived
    /// Time to look at the bundle's files.
    case tick
}

extension SharedDocument {
    /// Whether `payload` announces an application message this member sent itself: `live`
    /// does not pull for those (the sender has its changes; its cursor moves past the seq at
    /// the next pull), which would otherwise run beside this member's next edit.
    nonisolated func isOwnApplicationMessage(_ payload: ConvoEventPayload) -> Bool {
        guard case let .message(event) = payload else { return false }
        return event.message.sender == account.did && event.message.messageType == .app
    }
}
