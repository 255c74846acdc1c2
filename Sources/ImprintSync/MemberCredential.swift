import ImprintEd25519
import ImprintMLS

/// How a DID and an MLS leaf belong together: the leaf's basic credential is the DID's UTF-8
/// bytes and its signature key is that `did:key`'s Ed25519 key, so the device's one identity
/// key signs service tokens and MLS messages alike.
///
/// The Delivery Service hands out key packages and routes Welcomes, but it is not trusted
/// with identities: every key package fetched for a DID, every leaf of a tree joined from a
/// Welcome and every leaf a commit adds or updates is checked here, so a service that swaps a
/// key package for one of its own is caught before the key package joins the group.
enum MemberCredential {
    /// The credential for `did`.
    static func credential(for did: DIDKey) -> Credential {
        .basic(identity: Array(did.did.utf8))
    }

    /// The DID a leaf is bound to, after checking that its credential names a `did:key` whose
    /// key is the leaf's signature key. Throws ``SyncError/Code/credentialMismatch``.
    static func did(of credential: Credential, signatureKey: [UInt8]) throws(SyncError) -> String {
        guard case let .basic(identity) = credential, let text = String(validating: identity, as: UTF8.self) else {
            throw SyncError(.credentialMismatch, "a leaf's credential is not a basic did:key credential")
        }
        guard let did = try? DIDKey(did: text) else {
            throw SyncError(.credentialMismatch, "a leaf's credential is not a did:key (\(text.prefix(80)))")
        }
        guard did.publicKeyBytes == signatureKey else {
            throw SyncError(.credentialMismatch, "the leaf of \(text) carries a signature key that is not its did:key's key")
        }
        return text
    }

    /// Checks a key package fetched for `expectedDID`: well formed for `suite`, signed, bound
    /// to that DID. Throws ``SyncError/Code/credentialMismatch`` or the MLS validation error.
    static func check(_ keyPackage: KeyPackage, for expectedDID: String, suite: CipherSuite, now: UInt64) throws -> KeyPackage {
        try keyPackage.validate(suite: suite, now: now)
        let did = try did(of: keyPackage.leafNode.credential, signatureKey: keyPackage.leafNode.signatureKey)
        guard did == expectedDID else {
            throw SyncError(.credentialMismatch, "the key package handed out for \(expectedDID) belongs to \(did)")
        }
        return keyPackage
    }

    /// The roster of `group`: each member's DID by leaf index, every leaf checked.
    static func roster(of group: MLSGroup) throws(SyncError) -> [UInt32: String] {
        var roster: [UInt32: String] = [:]
        for member in group.members {
            roster[member.leafIndex] = try did(of: member.credential, signatureKey: member.signatureKey)
        }
        return roster
    }
}
