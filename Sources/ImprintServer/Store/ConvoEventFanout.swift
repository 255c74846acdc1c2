import Foundation
import ImprintDelivery

/// One event to store, with the DIDs that receive it.
///
/// Stored once: the payload is one `event_payloads` row (kind, JSON, convo, time) and each
/// recipient gets one narrow `events` row `(recipient, id, payload_id)` whose id is its SSE
/// cursor. A message to 1,000 members is one payload and 1,000 small rows, not 1,000 copies
/// of its JSON; reading a subscription joins the two.
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

    /// The events of an `addMembers` commit: its `message` to every active member, one
    /// `membership added` per new member to the members who were there before and to the new
    /// member itself (the new ones learn the rest of the roster from their Welcome), and a
    /// `welcome` to each new member.
    ///
    /// So adding `n` members to a group of `m` stores `m + n` message rows, `(m + 1) × n`
    /// membership rows and `n` welcome rows, each a few dozen bytes referencing one payload;
    /// had every member received every `added`, adding 1,000 people at once would store a
    /// million rows in one transaction.
    static func addition(convoId: String, commit message: MessageView, added: [String], members: [String]) -> [PendingEvent] {
        let newcomers = Set(added)
        let before = members.filter { !newcomers.contains($0) }
        var events = [PendingEvent(payload: .message(MessageEvent(convoId: convoId, message: message)), recipients: members)]
        for did in added {
            events.append(PendingEvent(payload: .membership(MembershipEvent(convoId: convoId, did: did, action: .added)), recipients: before + [did]))
            events.append(PendingEvent(payload: .welcome(WelcomeEvent(convoId: convoId)), recipients: [did]))
        }
        return events.filter { !$0.recipients.isEmpty }
    }
}
