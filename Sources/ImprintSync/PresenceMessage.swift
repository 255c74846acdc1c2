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

/// The wire form of a presence update: sealed with a key of the current epoch, signed by the
/// sender's identity, relayed by the Delivery Service (`sendEphemeral`) and stored nowhere.
///
/// Not an MLS PrivateMessage on purpose: a PrivateMessage consumes a generation of the
/// sender's ratchet, which would have to be committed to the key store (an fsync) for every
/// caret move on the sender and every receiver, and would interleave with the generations of
/// the document's own messages. Instead:
/// - key: the MLS exporter of the current epoch, label `imprint presence`, context the convo
///   id (only the epoch's members can derive it; it changes with every commit, so a removed
///   member reads no presence after its removal);
/// - sealed: AES-256-GCM, a random 96-bit nonce, associated data `"IPR1" ‖ convo ‖ epoch`;
///   on the wire `nonce ‖ ciphertext ‖ tag`, the plaintext zero-padded to 256 bytes;
/// - plaintext (TLS presentation language): `"IPR1"`, `opaque did<V>`, `uint8 active`,
///   `optional<opaque cursor<V>>` twice (caret, selection end; the engine's binary cursors),
///   `uint64 sent_at_ms`, then `opaque signature<V>`: Ed25519 by the DID's key over
///   `"imprint presence v1" ‖ opaque convo<V> ‖ uint64 epoch ‖` everything before it. The
///   exporter key is shared by every member, so the signature is what stops one member from
///   speaking for another.
struct PresenceMessage {
    static let label: [UInt8] = Array("IPR1".utf8)
    static let signatureContext: [UInt8] = Array("imprint presence v1".utf8)
    static let paddedBytes = 256

    /// The epoch's presence key.
    static func key(group: MLSGroup, convoId: String) throws -> SymmetricKey {
        SymmetricKey(data: try group.exportSecret(label: "imprint presence", context: Array(convoId.utf8), length: 32))
    }

    static func seal(_ update: PresenceUpdate, signingKey: Curve25519.Signing.PrivateKey, group: MLSGroup, convoId: String) throws -> [UInt8] {
        var w = TLSWriter(capacity: 256)
        w.writeBytes(label)
        w.writeOpaque(Array(update.did.utf8))
        w.writeUInt8(update.isActive ? 1 : 0)
        w.writeOptional(update.cursor) { w, cursor in w.writeOpaque(cursor.bytes) }
        w.writeOptional(update.selectionEnd) { w, cursor in w.writeOpaque(cursor.bytes) }
        w.writeUInt64(UInt64(max(0, update.sentAt.timeIntervalSince1970 * 1000)))
        let signature = try signingKey.signature(for: signedBytes(w.bytes, convoId: convoId, epoch: group.epoch))
        w.writeOpaque(Array(signature))
        var plaintext = w.bytes
        plaintext.append(contentsOf: repeatElement(0, count: max(0, paddedBytes - plaintext.count)))
        let box = try AES.GCM.seal(plaintext, using: key(group: group, convoId: convoId), nonce: AES.GCM.Nonce(),
                                   authenticating: associatedData(convoId: convoId, epoch: group.epoch))
        return Array(box.nonce) + Array(box.ciphertext) + Array(box.tag)
    }

    /// Opens a relayed message of `sender` (the Delivery Service's authenticated sender) sent
    /// in `group`'s current epoch. Throws ``SyncError/Code/invalidPayload`` for anything that
    /// does not open, parse, name `sender`, name a member, or verify.
    static func open(_ data: [UInt8], sender: String, group: MLSGroup, convoId: String) throws -> PresenceUpdate {
        guard data.count >= 12 + 16 + paddedBytes, data.count <= 4096 else {
            throw SyncError(.invalidPayload, "a presence message of \(data.count) bytes")
        }
        let plaintext: [UInt8]
        do {
            let box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: data.prefix(12)), ciphertext: data.dropFirst(12).dropLast(16),
                                            tag: data.suffix(16))
            plaintext = Array(try AES.GCM.open(box, using: key(group: group, convoId: convoId),
                                               authenticating: associatedData(convoId: convoId, epoch: group.epoch)))
        } catch {
            throw SyncError(.invalidPayload, "a presence message from \(sender) does not open in epoch \(group.epoch)")
        }
        do {
            var r = TLSReader(plaintext)
            guard try r.readBytes(4) == label else { throw SyncError(.invalidPayload, "not a presence message") }
            guard let did = String(validating: try r.readOpaque(), as: UTF8.self) else { throw SyncError(.invalidPayload, "presence DID is not UTF-8") }
            let active = try r.readUInt8()
            let cursor = try r.readOptional { try Cursor(bytes: try $0.readOpaque()) }
            let selectionEnd = try r.readOptional { try Cursor(bytes: try $0.readOpaque()) }
            let sentAt = try r.readUInt64()
            let signed = Array(plaintext[..<(plaintext.count - r.remaining)])
            let signature = try r.readOpaque()
            guard try r.readBytes(r.remaining).allSatisfy({ $0 == 0 }), active <= 1 else {
                throw SyncError(.invalidPayload, "a presence message with trailing bytes")
            }
            guard did == sender else { throw SyncError(.invalidPayload, "a presence message of \(did) relayed as \(sender)'s") }
            guard try MemberCredential.roster(of: group).values.contains(did) else {
                throw SyncError(.invalidPayload, "a presence message of \(did), who is not in the group")
            }
            let key = try DIDKey(did: did)
            guard key.publicKey.isValidSignature(signature, for: signedBytes(signed, convoId: convoId, epoch: group.epoch)) else {
                throw SyncError(.invalidPayload, "a presence message of \(did) whose signature does not verify")
            }
            return PresenceUpdate(did: did, isActive: active == 1, cursor: cursor, selectionEnd: selectionEnd,
                                  sentAt: Date(timeIntervalSince1970: Double(min(sentAt, 1 << 52)) / 1000))
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.invalidPayload, "a malformed presence message from \(sender): \(error)")
        }
    }

    private static func signedBytes(_ body: [UInt8], convoId: String, epoch: UInt64) -> [UInt8] {
        var w = TLSWriter(capacity: body.count + 64)
        w.writeBytes(signatureContext)
        w.writeOpaque(Array(convoId.utf8))
        w.writeUInt64(epoch)
        w.writeBytes(body)
        return w.bytes
    }

    private static func associatedData(convoId: String, epoch: UInt64) -> [UInt8] {
        var w = TLSWriter(capacity: 64)
        w.writeBytes(label)
        w.writeBytes(Array(convoId.utf8))
        w.writeUInt64(epoch)
        return w.bytes
    }
}
