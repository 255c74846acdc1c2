/// What a `NOTIFY imprint_events` says: which recipients have new events, or that anyone may.
///
/// On the wire: `recipients` on the first line, then one DID per line; anything else, the empty
/// payload included, means "everyone" (what earlier versions sent, so mixed versions still wake
/// every subscriber they must). PostgreSQL refuses payloads of 8000 bytes or more; a key set
/// that does not fit, or a key a line cannot carry, is sent as `everyone`.
enum EventNotificationPayload: Equatable, Sendable {
    case everyone
    case recipients([String])

    /// PostgreSQL's limit with the default `BLCKSZ`: a payload must be shorter than 8000 bytes.
    static let maximumBytes = 7999
    static let header = "recipients"

    /// The payload for these recipients, or `everyone` when they cannot be carried.
    init<Recipients: Collection<String>>(recipients: Recipients, maximumBytes: Int = Self.maximumBytes) {
        var bytes = Self.header.utf8.count
        for recipient in recipients {
            bytes += 1 + recipient.utf8.count
            if bytes > maximumBytes || recipient.isEmpty || recipient.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) {
                self = .everyone
                return
            }
        }
        self = .recipients(Array(recipients))
    }

    /// Parses a received payload; anything not understood is `everyone`.
    init(text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 1, lines[0] == Self.header, !lines.dropFirst().contains(where: \.isEmpty) else {
            self = .everyone
            return
        }
        self = .recipients(lines.dropFirst().map(String.init))
    }

    var text: String {
        switch self {
        case .everyone: ""
        case .recipients(let recipients): ([Self.header] + recipients).joined(separator: "\n")
        }
    }

    /// Wakes the subscribers this notification concerns.
    func ring(_ bell: EventBell) {
        switch self {
        case .everyone: bell.ringAll()
        case .recipients(let recipients): bell.ring(recipients: recipients)
        }
    }
}
