import Foundation
import ImprintDelivery

/// One event to store, with the DIDs that receive it (one stored row per recipient).
struct PendingEvent: Sendable {
    var payload: ConvoEventPayload
    var recipients: [String]

    var kind: String { payload.name }

    func encodedPayload() throws -> String {
        String(decoding: try payload.encodedData(), as: UTF8.self)
    }
}
