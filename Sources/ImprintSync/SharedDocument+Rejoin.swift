import Foundation
import ImprintDelivery
import ImprintKeys
import ImprintMLS

extension SharedDocument {
    /// Starts a new membership in this bundle from the Welcome of an admin who removed this
    /// member and added it again (`renewMembers`), or nil-returns when no Welcome waits.
    ///
    /// The new group starts at the commit that added this member: everything before it is
    /// either already in the bundle or in the snapshot the adder sent right after it, which
    /// holds the document's full history. So the cursor starts at that commit (the Delivery
    /// Service set this member's processed cursor there), older epochs are skipped, and the
    /// next pull merges the snapshot. Edits made here while away are kept: those never pushed
    /// go out at the next push, those pushed in an epoch the group could not read are sent
    /// again (`applySnapshot`). The key package's private keys are then deleted and the
    /// Welcome confirmed, as `join` does. Returns whether it rejoined.
    func rejoinIfWelcomed() async throws -> Bool {
        guard let welcomed = try await Self.groupFromWelcome(convoId: convoId, account: account) else { return false }
        try await rejoin(welcomed)
        return true
    }

    func rejoin(_ welcomed: (group: MLSGroup, reference: [UInt8])) async throws {
        let mine = try await account.delivery.getCursors(convoId: convoId).cursors.first { $0.did == did }
        guard let addedAt = mine?.processedSeq else {
            throw SyncError(.removed, "the Delivery Service does not list \(did) in convo \(convoId) although a Welcome waits")
        }
        group = welcomed.group
        cursor = ProcessedCursor(epoch: group.epoch, seq: UInt64(addedAt))
        state.endedReason = nil
        state.joinedEpoch = group.epoch
        state.gaps = []
        state.processedAbove = []
        state.pendingCommitHash = nil
        state.pendingCommitAdds = false
        state.snapshotOwed = false
        state.acknowledgedSeq = addedAt
        rosterChecked = false
        rememberAuthenticator()
        try? account.keyStore.deleteGroup(convo: pendingConvo, for: account.identity.did)
        try writeGroup()
        try writeState()
        try account.keyStore.deleteKeyPackagePrivateKey(reference: welcomed.reference, for: account.identity.did)
        try await account.delivery.confirmWelcome(convoId: convoId)
        try await account.topUpKeyPackages()
    }
}
