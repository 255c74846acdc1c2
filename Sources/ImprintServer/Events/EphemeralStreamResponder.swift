import Foundation
import HTTPTypes
import Hummingbird
import ImprintDelivery
import NIOCore
import ServiceLifecycle

/// `subscribeEphemeral`: the ephemeral messages of one convo as server-sent events
/// (`event: ephemeral`, no `id:`: nothing is stored, so there is nothing to resume), from the
/// moment the stream opens, leaving out the subscriber's own. Membership is checked again as
/// soon as an event for the subscriber commits and at every heartbeat (``MembershipWatch``):
/// the stream of a member who was removed or left ends there.
struct EphemeralStreamResponder: Sendable {
    let store: any DeliveryStore
    let convoId: String
    let subscriber: String
    let metrics: ServerMetrics
    let heartbeat: Duration

    func response() -> Response {
        let body = ResponseBody { [store, convoId, subscriber, metrics, heartbeat] writer in
            let hub = store.ephemeralHub
            let (subscription, messages) = hub.subscribe(convoId: convoId) { metrics.recordEphemeralDropped(subscriber: "stream") }
            metrics.subscribers.increment()
            // Membership checks (at every heartbeat, with a keep-alive comment, and at every
            // event for the subscriber): their output goes through `sink` to the one task that
            // writes (a writer is not shared between tasks).
            let checks = MembershipWatch.checks(bell: store.eventBell, member: subscriber, heartbeat: heartbeat)
            defer {
                hub.unsubscribe(subscription)
                metrics.subscribers.decrement()
            }
            try await withGracefulShutdownHandler {
                try await writer.write(ByteBuffer(string: ": subscribed\n\n"))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    let (events, sink) = AsyncStream.makeStream(of: ByteBuffer?.self)
                    group.addTask {
                        for await message in messages where message.sender != subscriber {
                            var buffer = ByteBuffer(string: "event: ephemeral\ndata: ")
                            buffer.writeBytes(try WireJSON.encoder().encode(message))
                            buffer.writeString("\n\n")
                            sink.yield(buffer)
                        }
                        sink.finish()
                    }
                    group.addTask {
                        for await reason in checks {
                            guard (try? await store.isActiveMember(convoId: convoId, did: subscriber)) == true else { break }
                            if reason == .heartbeat { sink.yield(ByteBuffer(string: ": keep-alive\n\n")) }
                        }
                        sink.finish()
                    }
                    for await event in events {
                        guard let event else { break }
                        try await writer.write(event)
                    }
                    group.cancelAll()
                    hub.unsubscribe(subscription)
                }
            } onGracefulShutdown: {
                hub.unsubscribe(subscription)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: .eventStream, body: body)
    }
}
