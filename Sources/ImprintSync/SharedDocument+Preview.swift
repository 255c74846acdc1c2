import Foundation
import ImprintCRDT
import ImprintDelivery
import ImprintMLS

/// Previews: a change set shown to the other members before its durable send has finished.
///
/// The durable path (the edit's fsync, the outbox's, `sendMessage`, the zone save, the
/// receiver's fetch) is what makes an edit survive crashes and reach members who are offline;
/// it costs several milliseconds on each side. A member who is watching the document (`live`)
/// does not need to wait for it to *see* an edit. So the moment an edit through ``edit(_:)``
/// has made its change in memory, before the bundle writes it, the sender relays the change
/// set as an ephemeral message of kind `preview` (the Delivery Service's `sendEphemeral`,
/// v1.4: relayed to the members subscribed now, stored nowhere; while `live` holds the
/// member's ephemeral socket, v1.5, through that socket instead), and a receiver in the same
/// epoch opens it and merges its changes into the document in memory, where the editor's view
/// (`patches()`) shows them at once. Changes that reach the bundle another way (another
/// process, a folder-sync tool) are previewed when they are pushed.
///
/// Guarantees (docs/sync.md, "Previews"):
/// - **Nothing durable depends on a preview.** A preview is sealed with a key of the epoch
///   (``PreviewMessage``), not sent as an MLS message: it takes no generation of the sender's
///   ratchet, moves no receiver's, consumes no key, moves no cursor and writes nothing. The
///   changes' durable copy is encrypted and sent by the next push exactly as without previews;
///   the receiver's engine then finds them already merged and publishes no second patch.
/// - **As authenticated as the durable message.** A preview opens only with the key of the
///   member's current epoch, and must be signed by a member whose DID is the sender the
///   Delivery Service authenticated. Anything else is dropped and counted
///   (``droppedPreviews``). A replay within the epoch merges changes already merged: nothing.
/// - **A crash loses nothing.** A preview may leave before the edit is on the sender's disk;
///   if the sender then crashes, the others hold a change the sender lost, and the next of
///   them to push after `SyncOptions.previewGrace` (30 s) sends it (the sender gets its own
///   edit back).
/// - **Nobody's edits are lost to one.** Changes a member only previewed are not sent again
///   by that member for `SyncOptions.previewGrace` (their author is delivering them); if
///   their durable copy has not arrived by then, the member's next push includes them.
extension SharedDocument {
    /// Previews of this member in flight at once; more are skipped (the durable path still
    /// delivers those changes).
    static let previewsInFlightLimit = 4
    /// Changes remembered as previewed by this member (cleared as pushes deliver them).
    static let relayedPreviewsLimit = 4096

    /// How many previews were merged since this object was opened.
    public var appliedPreviews: Int { previewsApplied }
    /// How many relayed previews were dropped (another epoch, not a member's, not opening).
    public var droppedPreviews: Int { previewsDropped }

    // MARK: Sending

    /// Relays `changes` (this member's, not yet pushed) as a preview, off the caller's path:
    /// sealing takes tens of microseconds; on the ephemeral socket the frame is then handed to
    /// the socket's event loop without waiting, otherwise a `sendEphemeral` request runs
    /// beside whatever the caller does next (the bundle's fsync, the durable send). Its failure
    /// only means the others see the changes when their durable copy arrives. Skipped when previews are off
    /// (`SyncOptions.previewMaximumBytes` 0), nobody else is in the group, the sealed
    /// message would be larger than allowed, or too many are in flight.
    func sendPreview(of changes: [Change]) {
        guard !changes.isEmpty, account.options.previewMaximumBytes > 0, previewsInFlight < Self.previewsInFlightLimit,
              group.members.count > 1, state.endedReason == nil, state.staleReason == nil,
              let data = try? PreviewMessage.seal(changeSet: ChangeSet.encode(changes, level: 1), did: did,
                                                  signingKey: account.identity.signingKey, group: group, convoId: convoId),
              data.count <= account.options.previewMaximumBytes else { return }
        if relayedPreviews.count + changes.count > Self.relayedPreviewsLimit || relayedPreviewsEpoch != group.epoch {
            relayedPreviews = []
        }
        relayedPreviews.formUnion(changes.map(\.hash))
        relayedPreviewsEpoch = group.epoch
        let input = SendEphemeralInput(convoId: convoId, epoch: Int(group.epoch), data: Data(data), kind: EphemeralKind.preview)
        // On the socket the frame is handed to its event loop from here, without waiting:
        // it leaves while this actor goes on to the fsync it is meant to overtake.
        if ephemeralRoute.sendNow(input) {
            return
        }
        previewsInFlight += 1
        let delivery = account.delivery
        // Detached: an actor-isolated task would wait for this actor, which is busy with the
        // fsync that the preview is meant to overtake.
        Task.detached {
            try? await delivery.sendEphemeral(input)
            await self.previewSent()
        }
    }

    func previewSent() { previewsInFlight -= 1 }

    /// Previews the changes a push is about to send, unless this member already previewed
    /// them all in the current epoch (an ``edit(_:)`` does as it edits: members in a newer
    /// epoch drop those); then forgets them as previewed.
    func previewBeforePushing(_ unsent: [Change]) {
        if relayedPreviewsEpoch != group.epoch || !unsent.allSatisfy({ relayedPreviews.contains($0.hash) }) {
            sendPreview(of: unsent)
        }
        relayedPreviews.subtract(unsent.map(\.hash))
    }

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
            // Sealed for another epoch or group, forged, damaged, or its changes do not
            // apply: the durable path decides what they are.
            previewsDropped += 1
            return false
        }
    }

    /// The changes of `message` if it is a preview this member may merge now (see the rules
    /// above), nil if it is not; throws if it does not open, verify or decode.
    private func openPreview(_ message: EphemeralMessage) throws -> [Change]? {
        guard message.effectiveKind == EphemeralKind.preview, message.convoId == convoId, message.sender != did,
              state.endedReason == nil, UInt64(exactly: message.epoch) == group.epoch,
              message.data.count <= max(account.options.previewMaximumBytes, 4096) else {
            return nil
        }
        return try PreviewMessage.open(Array(message.data), sender: message.sender, group: group, members: try currentRoster(), convoId: convoId,
                                       maximumBytes: account.options.maximumPayloadBytes)
    }

    /// Forgets previewed changes older than `SyncOptions.previewGrace`, looking at most once a
    /// second (a typing session holds a thousand of them; a push or a preview should not scan
    /// them all).
    private func prunePreviewed() {
        let now = ContinuousClock.now
        guard now - previewedPrunedAt >= .seconds(1) else { return }
        previewedPrunedAt = now
        previewed = previewed.filter { now - $0.value < account.options.previewGrace }
    }

    /// The changes of `unsent` that this member should send: all but those it holds only
    /// from another member's recent preview (their author delivers them).
    func excludingPreviewed(_ unsent: [Change]) -> [Change] {
        guard !previewed.isEmpty else { return unsent }
        prunePreviewed()
        let now = ContinuousClock.now
        return unsent.filter { change in previewed[change.hash].map { now - $0 >= account.options.previewGrace } ?? true }
    }
}
