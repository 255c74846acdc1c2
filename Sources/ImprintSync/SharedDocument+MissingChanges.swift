import Foundation
import ImprintCRDT
import ImprintEncoding

/// Asking the members for changes that never arrived.
///
/// A message the Delivery Service sequenced whose record never reaches the zone (its sender's
/// save was lost, a zone lost it) is a gap (docs/sync.md, "Receiving"). The commit that ends
/// its epoch waits for it up to `SyncOptions.gapTimeout`; a record that arrives after its
/// epoch's keys were deleted can no longer be read. Either way the changes it carried are
/// still on the machines of the members who had them: at least its sender, who keeps every
/// change it sent. So the member asks them, through the engine's own sync protocol
/// (docs/sync-protocol.md) carried in the group like any message:
///
/// 1. **Request.** At the end of a pull, for gaps older than `gapTimeout` that were not asked
///    about in the last `gapTimeout`, and for messages that arrived unreadable, the member
///    sends a `syncRequest` payload (``MissingChangesRequest``): the engine's sync message of
///    a fresh session (its heads, the hashes it knows it lacks, a Bloom filter of what it
///    has), naming who should answer: the senders of those messages, or, when one of them is
///    no longer in the group, up to ``fallbackTargets`` other members.
/// 2. **Answer.** A named member that reads the request answers at the end of that pull with
///    a `syncReply` payload (``MissingChangesAnswer``): the engine's reply to the request,
///    carrying every change the requester lacks. It is an ordinary message of the group, so
///    every member applies its changes (the engine drops the ones it has by hash).
/// 3. **Recovered.** When the requester reads an answer from a member whose messages it was
///    missing, everything that member had sent before the answer is in the document: the
///    gaps of that member's below the answer's seq are removed, and the cursor passes them.
///    An answer from another member brings its changes but proves nothing about the gaps,
///    which stay in `status` (and are asked about again after another `gapTimeout`).
///
/// Nothing here is needed for correctness of what does arrive, and nothing blocks: a request
/// or answer that fails to send is sent again at a later pull (a request after another
/// `gapTimeout`, an answer when the requester asks again). Tested in `GapTests`.
extension SharedDocument {
    /// How many other members a request names when a missing message's sender has left.
    static let fallbackTargets = 3

    /// Sends a request for missing changes when some are due (see the type's description).
    func requestMissingChanges() async throws {
        guard state.endedReason == nil, state.staleReason == nil else { return }
        let now = Date()
        let timeout = account.options.gapTimeout.inSeconds
        let due = state.gaps.filter { gap in
            now.timeIntervalSince(gap.firstSeen) >= timeout && gap.requestedAt.map { now.timeIntervalSince($0) >= timeout } ?? true
        }
        guard !due.isEmpty || !state.unreadableFrom.isEmpty else { return }
        let members = try currentRoster().keys.filter { $0 != did }.sorted()
        guard !members.isEmpty else { return }
        var targets = Array(Set(due.map(\.sender) + state.unreadableFrom)).filter { $0 != did }.sorted()
        if targets.isEmpty || !targets.allSatisfy(members.contains) {
            targets = Array(Set(targets.filter(members.contains) + members.prefix(Self.fallbackTargets))).sorted()
        }
        var session = ImprintCRDT.SyncState()
        guard let message = bundle.document.generateSyncMessage(&session) else { return }
        let request = MissingChangesRequest(targets: targets, message: message)
        do {
            _ = try await send(SyncPayload(kind: .syncRequest, body: request.encoded()), heads: [])
        } catch {
            // Asked again at a later pull: the gaps stay due.
            return
        }
        for index in state.gaps.indices where due.contains(where: { $0.seq == state.gaps[index].seq }) {
            state.gaps[index].requestedAt = now
        }
        state.unreadableFrom = []
        try saveState()
    }

    /// Remembers a request this member should answer (it is named, and it is not its own).
    func noteRequest(_ request: MissingChangesRequest, from requester: String) {
        guard requester != did, request.targets.contains(did) else { return }
        missingChangesAsked[requester] = request.message
    }

    /// Answers the requests read by this pull, one message each.
    func answerMissingChangeRequests() async throws {
        guard !missingChangesAsked.isEmpty, state.endedReason == nil, state.staleReason == nil else { return }
        for (requester, message) in missingChangesAsked.sorted(by: { $0.key < $1.key }) {
            missingChangesAsked[requester] = nil
            // A fresh session per request: the engine judges from the request alone what
            // the requester lacks. The request carries no changes, so nothing is applied here.
            var session = ImprintCRDT.SyncState()
            guard (try? bundle.document.receiveSyncMessage(&session, message)) != nil,
                  let reply = bundle.document.generateSyncMessage(&session) else { continue }
            let answer = MissingChangesAnswer(requester: requester, message: reply)
            do {
                _ = try await send(SyncPayload(kind: .syncReply, body: answer.encoded()), heads: [])
            } catch {
                return  // the requester asks again after another gap timeout
            }
        }
    }

    /// Applies the changes of an answer (any member's), and, for this member's own request,
    /// removes the gaps of the answering member below `seq` (see the type's description).
    func applyAnswer(_ answer: MissingChangesAnswer, from author: String, seq: Int) throws {
        let before = bundle.document.currentHeads
        var session = ImprintCRDT.SyncState()
        do {
            try bundle.document.receiveSyncMessage(&session, answer.message)
        } catch {
            throw SyncError(.invalidPayload, "an answer with missing changes from \(author) that does not decode: \(error)")
        }
        remember(received: bundle.document.changes(since: before).map(\.hash))
        guard answer.requester == did else { return }
        let recovered = state.gaps.filter { $0.sender == author && $0.seq < seq }.sorted { $0.seq < $1.seq }
        state.gaps.removeAll { gap in recovered.contains { $0.seq == gap.seq } }
        state.unreadableFrom.removeAll { $0 == author }
        for gap in recovered { advanceCursor(to: gap.message) }
    }
}
