import Foundation
import ImprintCRDT
import ImprintDelivery

extension SharedDocument {
    /// Tells the members watching the document (``presenceUpdates()``) that this member is
    /// editing, with its caret at code-point `position` of the body text (and the selection's
    /// other end at `selectionEnd`), or that it stopped (`active: false`). Sent as a cursor
    /// that stays put while the others edit, encrypted with a key of the current epoch and
    /// signed (`PresenceMessage`), relayed by the Delivery Service to the members subscribed
    /// now (through the member's ephemeral socket while ``live(pollInterval:pullInterval:)``
    /// holds one, by `sendEphemeral` otherwise) and stored nowhere: neither server keeps it, and a member who subscribes later
    /// never sees it.
    ///
    /// ```swift
    /// try await doc.sendPresence(at: 42)
    /// for try await update in doc.presenceUpdates() {
    ///     if update.isActive, let cursor = update.cursor, let index = try await doc.index(of: cursor) {
    ///         print(update.did, "is at", index)
    ///     }
    /// }
    /// ```
    public func sendPresence(at position: Int?, selectionEnd: Int? = nil, active: Bool = true) async throws {
        try ensureActive()
        try reloadBundleIfChanged()
        let document = bundle.document
        let update = PresenceUpdate(
            did: did, isActive: active,
            cursor: try position.map { try document.cursor(bundle.body, at: $0) },
            selectionEnd: try selectionEnd.map { try document.cursor(bundle.body, at: $0) },
            sentAt: Date())
        let data = try PresenceMessage.seal(update, signingKey: account.identity.signingKey, group: group, convoId: convoId)
        try await ephemeralRoute.send(SendEphemeralInput(convoId: convoId, epoch: Int(group.epoch), data: Data(data)))
    }

    /// The other members' presence updates as they arrive, from now on (nothing sent before
    /// the stream opened comes back). An update that does not open in this member's current
    /// epoch (pull to catch up), does not verify, or is older than one already delivered for
    /// its member is dropped; the stream ends when the Delivery Service no longer counts this
    /// identity as a member.
    public nonisolated func presenceUpdates() -> AsyncThrowingStream<PresenceUpdate, Error> {
        let messages = account.delivery.subscribeEphemeral(convoId: convoId)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await message in messages where message.effectiveKind == EphemeralKind.presence {
                        if let update = await self.openPresence(message) { continuation.yield(update) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The index in the body text, as this member has it now, of a cursor from a presence
    /// update; nil when it names text that has not reached this member yet.
    public func index(of cursor: Cursor) throws -> Int? {
        try reloadBundleIfChanged()
        do {
            return try bundle.document.index(of: cursor, in: bundle.body)
        } catch let error as CRDTError where error.code == .noSuchItem {
            return nil
        }
    }

    /// How many relayed presence messages were dropped (another epoch, not verifying, stale).
    public var droppedPresenceMessages: Int { presenceDropped }

    func openPresence(_ message: EphemeralMessage) -> PresenceUpdate? {
        guard message.convoId == convoId, UInt64(exactly: message.epoch) == group.epoch,
              let members = try? currentRoster(),
              let update = try? PresenceMessage.open(Array(message.data), sender: message.sender, group: group, members: members,
                                                     convoId: convoId),
              presenceSeen[update.did].map({ $0 < update.sentAt }) ?? true else {
            presenceDropped += 1
            return nil
        }
        presenceSeen[update.did] = update.sentAt
        return update
    }
}
