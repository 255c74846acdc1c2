import ImprintMLS

/// The members of a group in one epoch (their DIDs and keys), read from its tree once and
/// kept while the epoch lasts.
///
/// Presence updates and previews arrive several times a second, and each must come from a
/// member of the receiver's current epoch. Reading the roster from the ratchet tree
/// (``MemberCredential/roster(of:)``: every leaf, every credential checked) took about a
/// tenth of a millisecond per message on the edit-to-view path; the epoch's roster cannot
/// change until the epoch does, so it is read once per epoch instead.
///
/// An epoch is recognised by its epoch authenticator (RFC 9420, 8.7), which differs between
/// any two epochs, also of two groups that share an epoch number.
///
/// ```swift
/// if roster?.isCurrent(for: group) != true { roster = try EpochRoster(group: group) }
/// guard let key = roster!.keys[sender] else { ... }
/// ```
struct EpochRoster: Sendable {
    /// The epoch this roster was read in.
    let epochAuthenticator: [UInt8]
    /// The members' Ed25519 public keys by DID (each leaf's signature key, which
    /// ``MemberCredential`` checked is its `did:key`'s key).
    let keys: [String: [UInt8]]

    /// The roster of `group`'s current epoch. Throws ``SyncError/Code/credentialMismatch``
    /// when a leaf is not bound to the DID it names.
    init(group: MLSGroup) throws(SyncError) {
        epochAuthenticator = group.epochAuthenticator
        var keys: [String: [UInt8]] = [:]
        for member in group.members {
            keys[try MemberCredential.did(of: member.credential, signatureKey: member.signatureKey)] = member.signatureKey
        }
        self.keys = keys
    }

    /// Whether this is the roster of `group`'s current epoch.
    func isCurrent(for group: MLSGroup) -> Bool { group.epochAuthenticator == epochAuthenticator }
}

extension SharedDocument {
    /// The public keys of the members of this member's current epoch by DID, read from the
    /// tree once per epoch (``EpochRoster``).
    func currentRoster() throws(SyncError) -> [String: [UInt8]] {
        if let roster = epochRoster, roster.isCurrent(for: group) { return roster.keys }
        let roster = try EpochRoster(group: group)
        epochRoster = roster
        return roster.keys
    }
}
