import Crypto
import ImprintCRDT
import ImprintEncoding
import ImprintMLS

/// The wire form of a preview (docs/sync.md, "Previews"): a change set sealed for the current
/// epoch's members and signed by its sender (``EpochSeal``, which says why this is not an MLS
/// message), relayed by the Delivery Service (`sendEphemeral`, kind `preview`) and stored
/// nowhere. The durable copy of the same changes travels separately, as an MLS message.
///
/// - key: exporter label `imprint preview`; associated data and plaintext start `"IPV1"`;
/// - plaintext (TLS presentation language): `"IPV1"`, `opaque did<V>`, `opaque changes<V>`
///   (`ChangeSet` bytes), then `opaque signature<V>`: Ed25519 by the DID's key over
///   `"imprint preview v1" ‖ opaque convo<V> ‖ uint64 epoch ‖` everything before it; then
///   zeros, so that the sealed message is a size bucket long (256, 512, 1,024 bytes, ...: the
///   buckets of ``SyncPayload``), which is all the relay learns of what was typed.
struct PreviewMessage {
    static let box = EpochSeal(exporterLabel: "imprint preview", label: Array("IPV1".utf8),
                               signatureContext: Array("imprint preview v1".utf8), name: "preview")
    /// Nonce and tag around the plaintext.
    static let overhead = 12 + 16

    /// `changeSet` sealed as `did`'s preview in `group`'s current epoch.
    static func seal(changeSet: [UInt8], did: String, signingKey: Curve25519.Signing.PrivateKey, group: MLSGroup,
                     convoId: String) throws -> [UInt8] {
        try box.sealSigned(did: did, signingKey: signingKey, group: group, convoId: convoId,
                           paddedLength: { SyncPayload.bucket(for: $0 + overhead) - overhead }) { w in
            w.writeOpaque(changeSet)
        }
    }

    /// The changes of a preview that `sender` (the Delivery Service's authenticated sender)
    /// relayed in `group`'s current epoch. Throws ``SyncError/Code/invalidPayload`` for
    /// anything that does not open, parse, name `sender`, name a member or verify, and for a
    /// change set that does not decode within `maximumBytes`.
    static func open(_ data: [UInt8], sender: String, group: MLSGroup, members: [String: [UInt8]], convoId: String,
                     maximumBytes: Int) throws(SyncError) -> [Change] {
        let changeSet = try box.openSigned(data, sender: sender, group: group, members: members, convoId: convoId) { r in try r.readOpaque() }
        do {
            return try ChangeSet.decode(changeSet, maximumBytes: maximumBytes)
        } catch {
            throw SyncError(.invalidPayload, "a preview from \(sender) whose changes do not decode: \(error)")
        }
    }
}
