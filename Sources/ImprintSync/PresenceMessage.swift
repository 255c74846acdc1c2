import Crypto
import Foundation
import ImprintCRDT
import ImprintEd25519
import ImprintEncoding
import ImprintMLS

/// Who is editing a shared document now, and where: one member's presence as the others see it.
public struct PresenceUpdate: Sendable, Hashable {
    /// The member's DID (checked: the Delivery Service's authenticated sender, a leaf of the
    /// MLS group, and the key that signed the update).
    public var did: String
    /// False when the member says it stopped editing (closed the document).
    public var isActive: Bool
    /// The member's caret in the body text, as a cursor that stays put while others edit
    /// (``SharedDocument/index(of:)`` resolves it), or nil.
    public var cursor: Cursor?
    /// The other end of the member's selection, or nil.
    public var selectionEnd: Cursor?
    /// When the member sent it (its clock).
    public var sentAt: Date

    public init(did: String, isActive: Bool, cursor: Cursor?, selectionEnd: Cursor?, sentAt: Date) {
        self.did = did
        self.isActive = isActive
        self.cursor = cursor
        self.selectionEnd = selectionEnd
        self.sentAt = sentAt
    }
}

/// The wire form of a presence update: sealed for the current epoch's members and signed by
/// the sender's identity (``EpochSeal``, which says why this is not an MLS message), relayed by
/// the Delivery Service (`sendEphemeral`) and stored nowhere.
///
/// - key: exporter label `imprint presence`; associated data and plaintext start `"IPR1"`;
/// - plaintext (TLS presentation language): `"IPR1"`, `opaque did<V>`, `uint8 active`,
///   `optional<opaque cursor<V>>` twice (caret, selection end; the engine's binary cursors),
///   `uint64 sent_at_ms`, then `opaque signature<V>`: Ed25519 by the DID's key over
///   `"imprint presence v1" ‖ opaque convo<V> ‖ uint64 epoch ‖` everything before it; zeros
///   to 256 bytes.
struct PresenceMessage {
    static let box = EpochSeal(exporterLabel: "imprint presence", label: Array("IPR1".utf8),
                               signatureContext: Array("imprint presence v1".utf8), name: "presence message")
    static let paddedBytes = 256

    static func seal(_ update: PresenceUpdate, signingKey: Curve25519.Signing.PrivateKey, group: MLSGroup, convoId: String) throws -> [UInt8] {
        try box.sealSigned(did: update.did, signingKey: signingKey, group: group, convoId: convoId,
                           paddedLength: { _ in paddedBytes }) { w in
            w.writeUInt8(update.isActive ? 1 : 0)
            w.writeOptional(update.cursor) { w, cursor in w.writeOpaque(cursor.bytes) }
            w.writeOptional(update.selectionEnd) { w, cursor in w.writeOpaque(cursor.bytes) }
            w.writeUInt64(UInt64(max(0, update.sentAt.timeIntervalSince1970 * 1000)))
        }
    }

    /// Opens a relayed message of `sender` (the Delivery Service's authenticated sender) sent
    /// in `group`'s current epoch. Throws ``SyncError/Code/invalidPayload`` for anything that
    /// does not open, parse, name `sender`, name a member, or verify.
    static func open(_ data: [UInt8], sender: String, group: MLSGroup, members: [String: [UInt8]], convoId: String) throws -> PresenceUpdate {
        guard data.count >= 12 + 16 + paddedBytes, data.count <= 4096 else {
            throw SyncError(.invalidPayload, "a presence message of \(data.count) bytes")
        }
        return try box.openSigned(data, sender: sender, group: group, members: members, convoId: convoId) { r in
            let active = try r.readUInt8()
            guard active <= 1 else { throw SyncError(.invalidPayload, "a presence message whose active flag is \(active)") }
            let cursor = try r.readOptional { try Cursor(bytes: try $0.readOpaque()) }
            let selectionEnd = try r.readOptional { try Cursor(bytes: try $0.readOpaque()) }
            let sentAt = try r.readUInt64()
            // The DID is the sender's: `openSigned` checked it.
            return PresenceUpdate(did: sender, isActive: active == 1, cursor: cursor, selectionEnd: selectionEnd,
                                  sentAt: Date(timeIntervalSince1970: Double(min(sentAt, 1 << 52)) / 1000))
        }
    }
}
