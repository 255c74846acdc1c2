import Foundation
import HTTPTypes
import Hummingbird
import ImprintDelivery
import NIOCore
import ServiceLifecycle

/// `subscribeConvoEvents` as server-sent events. Each event carries its cursor as `id:`;
/// a client resumes with `Last-Event-ID` (or `?cursor=`) and gets every later event, because
/// events are read back from the store, never from memory. The `EventBell` only says when to look,
/// and rings this stream only for writes that stored events for `recipient` (or for unknown ones).
struct EventStreamResponder: Sendable {
    let store: any DeliveryStore
    let metrics: ServerMetrics
    let heartbeat: Duration
    static let pageSize = 500

    func response(recipient: String, after start: Int64) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        let body = ResponseBody { [store, metrics, heartbeat] writer in
            let bell = store.eventBell
            // Subscribed before the first read below, so nothing committed in between is missed.
            let (subscription, rings) = bell.subscribe(recipient: recipient)
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
                        let events = try await store.events(recipient: recipient, after: cursor, limit: Self.pageSize)
                        if events.isEmpty { break }
                        var buffer = ByteBuffer()
                        for event in events {
                            buffer.writeString("id: \(event.cursor)\nevent: \(event.payload.name)\ndata: ")
                            buffer.writeBytes(try event.payload.encodedData())
                            buffer.writeString("\n\n")
                            cursor = event.cursor
                        }
                        try await writer.write(buffer)
                        wrote = true
                        if events.count < Self.pageSize { break }
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
        return Response(status: .ok, headers: headers, body: body)
    }
}
