import Foundation

/// `sendEphemeral` input (v1.2): an opaque message the Delivery Service relays at once to the
/// convo's members who are subscribed now (`subscribeEphemeral`), and stores nowhere: no seq,
/// no event row, no replay for a subscriber who connects later. For presence (who is editing,
/// where their cursor is), already end-to-end encrypted by the sender.
///
/// v1.4 adds `kind`, which the service relays as given (absent: `presence`), so that one
/// subscription carries several kinds and a member tells them apart before opening one.
public struct SendEphemeralInput: Codable, Hashable, Sendable {
    public var convoId: String
    /// The sender's epoch (members drop messages of another epoch).
    public var epoch: Int
    /// The ciphertext, at most `maxEphemeralBytes` (2 KiB by default).
    public var data: Data
    /// v1.4: what the message is (``EphemeralKind``); nil means ``EphemeralKind/presence``.
    public var kind: String?

    public init(convoId: String, epoch: Int, data: Data, kind: String? = nil) {
        self.convoId = convoId
        self.epoch = epoch
        self.data = data
        self.kind = kind
    }
}

/// The kinds of ephemeral message the sync layer sends (`kind` of ``SendEphemeralInput``):
/// 1 to 32 characters of `a-z`, `0-9` and `-`. The service checks only that form and
/// relays any such kind; members ignore kinds they do not know.
public enum EphemeralKind {
    /// Who is editing and where their caret is (the default when `kind` is absent).
    public static let presence = "presence"
    /// An application message relayed ahead of its sequenced copy, so that the others can
    /// show an edit before the sender's durable send has finished.
    public static let preview = "preview"

    /// Whether `kind` has the form the service accepts.
    public static func isValid(_ kind: String) -> Bool {
        (1...32).contains(kind.utf8.count) && kind.utf8.allSatisfy { (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2d }
    }
}

/// One `ephemeral` event of `subscribeEphemeral`: a `sendEphemeral` of another member, with
/// the sender the Delivery Service authenticated.
public struct EphemeralMessage: Codable, Hashable, Sendable {
    public var convoId: String
    public var sender: String
    public var epoch: Int
    public var data: Data
    /// v1.4: the sender's `kind` (nil: ``EphemeralKind/presence``).
    public var kind: String?

    public init(convoId: String, sender: String, epoch: Int, data: Data, kind: String? = nil) {
        self.convoId = convoId
        self.sender = sender
        self.epoch = epoch
        self.data = data
        self.kind = kind
    }

    /// The kind, with the default filled in.
    public var effectiveKind: String { kind ?? EphemeralKind.presence }
}
