import Foundation
import HTTPTypes
import Hummingbird
import ImprintDelivery
import NIOCore
import ServiceLifecycle

/// A server-sent-event stream fed from a store: the Delivery Service's `subscribeConvoEvents`
/// and the zone service's `subscribeZone` both use it. Each event carries its cursor as `id:`;
/// a client resumes with `Last-Event-ID` (or `?cursor=`) and gets every later event, because
/// events are read back from the store by `read`, never from memory. The `EventBell` only says
/// when to look, and rings this stream only for writes to `key` (or for unknown ones).
package struct EventStreamResponder<Cursor: Sendable>: Sendable {
    /// One read from `cursor`: the wire bytes of the events found (nil: none), the cursor after
    /// them, and whether a full page was read (so another read follows at once). A thrown error
    /// ends the stream (the zone service's access re-check does that).
    package typealias Read = @Sendable (_ cursor: Cursor) async throws -> (events: ByteBuffer?, cursor: Cursor, full: Bool)

    let bell: EventBell
    let key: String
    let metrics: ServerMetrics
    let heartbeat: Duration
    let read: Read

    package init(bell: EventBell, key: String, metrics: ServerMetrics, heartbeat: Duration, read: @escaping Read) {
        self.bell = bell
        self.key = key
        self.metrics = metrics
        self.heartbeat = heartbeat
        self.read = read
    }

    package func response(after start: Cursor) -> Response {
        let body = ResponseBody { [bell, key, metrics, heartbeat, read] writer in
            // Subscribed before the first read below, so nothing committed in between is missed.
            let (subscription, rings) = bell.subscribe(recipient: key)
            metrics.subscribers.increment()
            let ticker = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: heartbeat)
                    bell.ring(subscription)
                }
            }
            defer {
                ticker.cancel()
                bell.unsubscribe(subscription)
                metrics.subscribers.decrement()
            }
            try await withGracefulShutdownHandler {
                var cursor = start
                var lastWrite = ContinuousClock.now
                try await writer.write(ByteBuffer(string: ": subscribed\n\n"))
                var wakeups = rings.makeAsyncIterator()
                repeat {
                    var wrote = false
                    while true {
                        let page = try await read(cursor)
                        cursor = page.cursor
                        guard let events = page.events else { break }
                        try await writer.write(events)
                        wrote = true
                        if !page.full { break }
                    }
                    if wrote {
                        lastWrite = .now
                    } else if ContinuousClock.now - lastWrite >= heartbeat {
                        try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                        lastWrite = .now
                    }
                } while await wakeups.next() != nil
            } onGracefulShutdown: {
                bell.unsubscribe(subscription)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: .eventStream, body: body)
    }
}

extension EventStreamResponder where Cursor == Int64 {
    /// `subscribeConvoEvents`: `recipient`'s events from the Delivery Service's store.
    static func convoEvents(store: any DeliveryStore, recipient: String, metrics: ServerMetrics, heartbeat: Duration) -> Self {
        let pageSize = 500
        return EventStreamResponder(bell: store.eventBell, key: recipient, metrics: metrics, heartbeat: heartbeat) { cursor in
            let events = try await store.events(recipient: recipient, after: cursor, limit: pageSize)
            if events.isEmpty { return (nil, cursor, false) }
            var buffer = ByteBuffer()
            var last = cursor
            for event in events {
                buffer.writeString("id: \(event.cursor)\nevent: \(event.payload.name)\ndata: ")
                buffer.writeBytes(try event.payload.encodedData())
                buffer.writeString("\n\n")
                last = event.cursor
            }
            return (buffer, last, events.count == pageSize)
        }
    }
}

extension HTTPFields {
    /// The head of a server-sent-event stream: `text/event-stream`, not cached.
    static var eventStream: HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return headers
    }
}
