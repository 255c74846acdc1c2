import Foundation
import ImprintCRDT
import ImprintDelivery
import ImprintMLS

/// Previews: a change set shown to the other members before its durable send has finished.
///
/// The durable path (outbox fsync, `sendMessage`, the zone save, the receiver's fetch) is what
/// makes an edit survive crashes and reach members who are offline; it costs several
/// milliseconds on each side. A member who is watching the document (`live`) does not need to
/// wait for it to *see* an edit. So, beside the durable send, the sender relays the very same
/// MLS ciphertext as an ephemeral message of kind `preview` (the Delivery Service's
/// `sendEphemeral`, v1.4: relayed to the members subscribed now, stored nowhere; while `live`
/// holds the member's ephemeral socket, v1.5, through that socket instead), and a
/// receiver that is in the same epoch opens it and merges its changes into the document in
/// memory, where the editor's view (`patches()`) shows them at once.
///
/// Guarantees (docs/sync.md, "Previews"):
/// - **Nothing durable depends on a preview.** A preview moves no cursor, consumes no key and
///   writes nothing: it is decrypted on a copy of the group state, which is dropped. The
///   sequenced copy of the same message is processed later exactly as without previews (its
///   key consumed, its changes made durable, the cursor moved); the engine then finds the
///   changes already merged and publishes no second patch.
/// - **As authenticated as the durable message.** A preview is opened only in the member's
///   current epoch, must carry the epoch's authenticator, must verify as MLS content of a
///   member (signature and AEAD), and that member must be the sender the Delivery Service
///   authenticated. Anything else is dropped and counted (``droppedPreviews``).
/// - **The sender's nonce rule holds.** A preview is the ciphertext of a key already
///   committed to the key store as used (`reservedSendingKeys`), so it may leave before the
///   outbox is on disk; a crash then loses only the preview, and the changes go out again.
/// - **Nobody's edits are lost to one.** Changes a member only previewed are not sent again
///   by that member for ``previewGrace`` (their author is delivering them); if their durable
///   copy has not arrived by then, the member's next push includes them.
extension SharedDocument {
    /// How long changes merged from a preview count as their author's to deliver.
    static let previewGrace: Duration = .seconds(30)
    /// Previews of this member in flight at once; more are skipped (the durable path still
    /// delivers those changes).
    static let previewsInFlightLimit = 4

    /// How many previews were merged since this object was opened.
    public var appliedPreviews: Int { previewsApplied }
    /// How many relayed previews were dropped (another epoch, not a member's, not opening).
    public var droppedPreviews: Int { previewsDropped }

    // MARK: Sending

    /// Relays `ciphertext` (an application message of the current epoch) as a preview, off
    /// the caller's path: the request runs beside the durable send, and its failure only
    /// means the others see the edit when the durable copy arrives.
    func sendPreview(_ ciphertext: [UInt8]) {
        guard ciphertext.count <= account.options.previewMaximumBytes, previewsInFlight < Self.previewsInFlightLimit,
              group.members.count > 1 else { return }
        previewsInFlight += 1
        let route = ephemeralRoute
        let input = SendEphemeralInput(convoId: convoId, epoch: Int(group.epoch), data: Data(ciphertext), kind: EphemeralKind.preview)
        // Detached: an actor-isolated task would wait for this actor, which is busy with the
        // outbox's fsync that the preview is meant to overtake.
        Task.detached {
            try? await route.send(input)
            await self.previewSent()
        }
    }

    func previewSent() { previewsInFlight -= 1 }

    // MARK: Receiving

    /// Merges the changes of a relayed preview into the document in memory (their patches go
    /// to ``patches()`` subscribers at once). Returns whether it was merged; a preview that
    /// is dropped changes nothing, and its message still arrives through the durable path.
    @discardableResult
    func applyPreview(_ message: EphemeralMessage) -> Bool {
        do {
            guard let changes = try openPreview(message) else {
                previewsDropped += 1
                return false
            }
            // Only what is new here is another member's to deliver: a change this member
            // already had (its own, resent by someone else) stays this member's to send.
            let new = changes.filter { !bundle.document.contains($0.hash) }
            try bundle.document.apply(changes)
            prunePreviewed()
            let now = ContinuousClock.now
            for change in new { previewed[change.hash] = now }
            previewsApplied += 1
            return true
        } catch {
            // Already processed (its key consumed), malformed, or not this group's: the
            // durable path decides what it is.
            previewsDropped += 1
            return false
        }
    }

    /// The changes of `message` if it is a preview this member may merge now (see the rules
    /// above), nil if it is not; throws if it does not open or decode.
    private func openPreview(_ message: EphemeralMessage) throws -> [Change]? {
        guard message.effectiveKind == EphemeralKind.preview, message.convoId == convoId, message.sender != did,
              state.endedReason == nil, UInt64(exactly: message.epoch) == group.epoch,
              message.data.count <= max(account.options.previewMaximumBytes, 4096),
              case let .privateMessage(framed) = try MLSMessage(tlsBytes: Array(message.data)),
              framed.groupID == group.groupID, framed.epoch == group.epoch, framed.authenticatedData == authenticatorTag else {
            return nil
        }
        var scratch = group  // the keys this derives are dropped with it
        guard case let .application(data, sender, _) = try scratch.process(.privateMessage(framed)),
              let member = group.members.first(where: { $0.leafIndex == sender }),
              try MemberCredential.did(of: member.credential, signatureKey: member.signatureKey) == message.sender else {
            return nil
        }
        let payload = try SyncPayload(decoding: data)
        guard payload.kind == .changes else { return nil }
        return try ChangeSet.decode(payload.body, maximumBytes: account.options.maximumPayloadBytes)
    }

    /// Forgets previewed changes older than `previewGrace`.
    private func prunePreviewed() {
        let now = ContinuousClock.now
        previewed = previewed.filter { now - $0.value < Self.previewGrace }
    }

    /// The changes of `unsent` that this member should send: all but those it holds only
    /// from another member's recent preview (their author delivers them).
    func excludingPreviewed(_ unsent: [Change]) -> [Change] {
        guard !previewed.isEmpty else { return unsent }
        prunePreviewed()
        return unsent.filter { previewed[$0.hash] == nil }
    }
}
