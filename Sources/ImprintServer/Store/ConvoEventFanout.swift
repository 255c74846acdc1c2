import Foundation
import ImprintDelivery

/// One event to store, with the DIDs that receive it (one stored row per recipient).
struct PendingEvent: Sendable {
    var payload: ConvoEventPayload
    var recipients: [String]

    var kind: String { payload.name }

    /// Every DID that receives one of `events`, each once, in ascending order: the keys to ring.
    static func recipients(of events: [PendingEvent]) -> [String] {
        Set(events.flatMap(\.recipients)).sorted()
    }

    func encodedPayload() throws -> String {
        String(decoding: try payload.encodedData(), as: UTF8.self)
    }
}
