import ImprintServer

/// A zone id, parsed: its kind follows from its prefix.
/// - `doc_<convoId>`: shared by the members of Delivery Service convo `<convoId>`;
/// - `inbox_<did>`: `<did>`'s mailbox;
/// - `share_<id>`: a reviewer-snapshot zone (`<id>` 1-128 characters of `[A-Za-z0-9._~-]`).
struct ZoneID: Sendable, Hashable {
    enum Kind: String, Sendable {
        case shared, inbox, snapshot
    }

    let raw: String
    let kind: Kind
    /// The convo id (shared), the owner DID (inbox) or the snapshot id (snapshot).
    let subject: String

    init(_ raw: String) throws {
        guard raw.utf8.count <= 600 else { throw DeliveryError.invalidRequest("zoneId too long") }
        self.raw = raw
        if raw.hasPrefix("doc_") {
            kind = .shared
            subject = String(raw.dropFirst(4))
            try InputRules.convoId(subject)
        } else if raw.hasPrefix("inbox_") {
            kind = .inbox
            subject = String(raw.dropFirst(6))
            try InputRules.did(subject, field: "zoneId")
        } else if raw.hasPrefix("share_") {
            kind = .snapshot
            subject = String(raw.dropFirst(6))
            guard (1...128).contains(subject.utf8.count), subject.utf8.allSatisfy(ZoneInputRules.isNameByte), !subject.contains(":") else {
                throw DeliveryError.invalidRequest("zoneId share_<id> needs 1-128 characters of [A-Za-z0-9._~-]")
            }
        } else {
            throw DeliveryError.invalidRequest("zoneId must start with doc_, inbox_ or share_")
        }
    }
}
