import Crypto
import ImprintEd25519
import ImprintEncoding
import ImprintMLS

/// How a member seals what it relays to the current epoch's members outside MLS messages
/// (presence, previews): the Delivery Service relays it and stores it nowhere.
///
/// Not an MLS PrivateMessage on purpose: a PrivateMessage consumes a generation of the
/// sender's ratchet, which must be committed to the key store (an fsync) before the message
/// leaves, and every receiver's ratchet moves past it; a caret move or a keystroke's preview
/// would then cost a durable write on every member. Instead:
/// - **key**: the MLS exporter of the current epoch under this kind's label, context the convo
///   id. Only the epoch's members derive it, and it changes with every commit, so a removed
///   member opens nothing sent after its removal;
/// - **box**: AES-256-GCM with a random 96-bit nonce, associated data `label ‖ convo ‖ epoch`
///   (`uint64`), on the wire `nonce ‖ ciphertext ‖ tag`;
/// - **signature**: every member derives the key, so the box alone does not say which member
///   wrote it. The plaintext carries the sender's DID and an Ed25519 signature by that DID's
///   key over `context ‖ opaque convo<V> ‖ uint64 epoch ‖` the signed part, and a receiver
///   checks that the DID is the sender the Delivery Service authenticated and a member of
///   the group (``verify(_:of:did:sender:group:convoId:)``).
///
/// The key lives as long as the epoch (unlike an MLS message key, deleted once used): someone
/// who takes a member's state during an epoch can open what was relayed earlier in that epoch
/// if they also recorded it in transit (docs/security-model.md).
struct EpochSeal: Sendable {
    /// The exporter label of the key (`imprint presence`).
    let exporterLabel: String
    /// Four bytes that start the associated data and the plaintext (`IPR1`).
    let label: [UInt8]
    /// What the signature covers first (`imprint presence v1`).
    let signatureContext: [UInt8]
    /// What errors call one of these messages (`presence message`).
    let name: String

    /// The epoch's key for this kind.
    func key(group: MLSGroup, convoId: String) throws -> SymmetricKey {
        SymmetricKey(data: try group.exportSecret(label: exporterLabel, context: Array(convoId.utf8), length: 32))
    }

    /// `plaintext` sealed under the current epoch's key: `nonce ‖ ciphertext ‖ tag`.
    func seal(_ plaintext: [UInt8], group: MLSGroup, convoId: String) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key(group: group, convoId: convoId), nonce: AES.GCM.Nonce(),
                                   authenticating: associatedData(convoId: convoId, epoch: group.epoch))
        return Array(box.nonce) + Array(box.ciphertext) + Array(box.tag)
    }

    /// The plaintext of `data` sealed in `group`'s current epoch. Throws
    /// ``SyncError/Code/invalidPayload`` when it does not open (another epoch, another group,
    /// damaged).
    func open(_ data: [UInt8], sender: String, group: MLSGroup, convoId: String) throws(SyncError) -> [UInt8] {
        do {
            guard data.count >= 12 + 16 else { throw SyncError(.invalidPayload, "") }
            let box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: data.prefix(12)), ciphertext: data.dropFirst(12).dropLast(16),
                                            tag: data.suffix(16))
            return Array(try AES.GCM.open(box, using: key(group: group, convoId: convoId),
                                          authenticating: associatedData(convoId: convoId, epoch: group.epoch)))
        } catch {
            throw SyncError(.invalidPayload, "a \(name) from \(sender) does not open in epoch \(group.epoch)")
        }
    }

    /// `did`'s message of this kind, sealed in `group`'s current epoch: the plaintext
    /// `label ‖ opaque did<V> ‖` what `fields` writes `‖ opaque signature<V>` (the DID's
    /// signature over everything before it), then zeros up to `paddedLength(its length)`.
    func sealSigned(did: String, signingKey: Curve25519.Signing.PrivateKey, group: MLSGroup, convoId: String,
                    paddedLength: (Int) -> Int, fields: (inout TLSWriter) -> Void) throws -> [UInt8] {
        var w = TLSWriter(capacity: 256)
        w.writeBytes(label)
        w.writeOpaque(Array(did.utf8))
        fields(&w)
        w.writeOpaque(try sign(w.bytes, signingKey: signingKey, convoId: convoId, epoch: group.epoch))
        var plaintext = w.bytes
        plaintext.append(contentsOf: repeatElement(0, count: max(0, paddedLength(plaintext.count) - plaintext.count)))
        return try seal(plaintext, group: group, convoId: convoId)
    }

    /// The fields (read by `fields`) of a message that `sender` (the Delivery Service's
    /// authenticated sender) relayed in `group`'s current epoch, laid out as
    /// ``sealSigned(did:signingKey:group:convoId:paddedLength:fields:)`` writes it. Throws
    /// ``SyncError/Code/invalidPayload`` for anything that does not open, parse (the label,
    /// the fields, the signature, zeros only after it), name `sender`, name a member or verify.
    func openSigned<Fields>(_ data: [UInt8], sender: String, group: MLSGroup, members: [String: [UInt8]], convoId: String,
                            fields: (inout TLSReader) throws -> Fields) throws(SyncError) -> Fields {
        let plaintext = try open(data, sender: sender, group: group, convoId: convoId)
        do {
            var r = TLSReader(plaintext)
            guard try r.readBytes(4) == label else { throw SyncError(.invalidPayload, "not a \(name)") }
            guard let did = String(validating: try r.readOpaque(), as: UTF8.self) else {
                throw SyncError(.invalidPayload, "the DID of a \(name) is not UTF-8")
            }
            let value = try fields(&r)
            let signed = Array(plaintext[..<(plaintext.count - r.remaining)])
            let signature = try r.readOpaque()
            guard try r.readBytes(r.remaining).allSatisfy({ $0 == 0 }) else {
                throw SyncError(.invalidPayload, "a \(name) with trailing bytes")
            }
            try verify(signature, of: signed, did: did, sender: sender, epoch: group.epoch, members: members, convoId: convoId)
            return value
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.invalidPayload, "a malformed \(name) from \(sender): \(error)")
        }
    }

    /// The sender's signature over `body` (the plaintext up to the signature).
    func sign(_ body: [UInt8], signingKey: Curve25519.Signing.PrivateKey, convoId: String, epoch: UInt64) throws -> [UInt8] {
        Array(try signingKey.signature(for: signedBytes(body, convoId: convoId, epoch: epoch)))
    }

    /// Checks that the message is `sender`'s (the DID it names is the one the Delivery
    /// Service authenticated), that `did` is one of `members` (the current epoch's roster,
    /// ``EpochRoster``: public keys by DID), and that `signature` over `body` verifies with
    /// that key (with `Ed25519SignatureVerifier.shared`, which keeps a prepared key per
    /// member). Throws ``SyncError/Code/invalidPayload`` otherwise.
    func verify(_ signature: [UInt8], of body: [UInt8], did: String, sender: String, epoch: UInt64, members: [String: [UInt8]],
                convoId: String) throws(SyncError) {
        guard did == sender else { throw SyncError(.invalidPayload, "a \(name) of \(did) relayed as \(sender)'s") }
        guard let key = members[did] else {
            throw SyncError(.invalidPayload, "a \(name) of \(did), who is not in the group")
        }
        guard Ed25519SignatureVerifier.shared.isValidSignature(signature, for: signedBytes(body, convoId: convoId, epoch: epoch),
                                                               publicKey: key) else {
            throw SyncError(.invalidPayload, "a \(name) of \(did) whose signature does not verify")
        }
    }

    private func signedBytes(_ body: [UInt8], convoId: String, epoch: UInt64) -> [UInt8] {
        var w = TLSWriter(capacity: body.count + 64)
        w.writeBytes(signatureContext)
        w.writeOpaque(Array(convoId.utf8))
        w.writeUInt64(epoch)
        w.writeBytes(body)
        return w.bytes
    }

    private func associatedData(convoId: String, epoch: UInt64) -> [UInt8] {
        var w = TLSWriter(capacity: 64)
        w.writeBytes(label)
        w.writeBytes(Array(convoId.utf8))
        w.writeUInt64(epoch)
        return w.bytes
    }
}
