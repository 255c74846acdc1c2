import ImprintEd25519

/// Where a device keeps its identities and MLS secrets at rest. One persistence seam with one
/// real implementation per backend (`SQLiteKeyStore` today; a Keychain store for Apple
/// platforms is planned, see docs/keys.md), all passing the same conformance suite.
///
/// Guarantees every implementation gives:
/// - **Isolation.** Everything but the identity list is scoped by an identity (`DIDKey`);
///   one identity never reads, overwrites or deletes another's rows, even with the same
///   convo id, epoch or key-package reference.
/// - **Sealing.** Private keys, group states and epoch secrets are stored only sealed
///   (AES-GCM under a key derived per identity from the store's master key, bound to the
///   identity, the table and the row's key); plaintext never reaches the files.
/// - **Forward secrecy on disk.** Once a `delete…` call returns, the deleted secret cannot be
///   found in any byte of the store's files, neither in plain form nor as the sealed blob
///   that held it. Overwriting a group state forgets the old one the same way.
/// - **Atomic group state.** `saveGroupState` writes the state and its processed cursor in
///   one transaction: after a crash at any point, a reader sees the old pair or the new one.
///
/// Every method is synchronous and safe to call from any thread.
///
/// ```swift
/// let store = try SQLiteKeyStore(path: home + "/keys.sqlite", unlock: .keyFile(path: home + "/keys.key"))
/// let me = try store.deviceIdentity()
/// try store.saveGroupState(GroupStateRecord(state: group.serializedState(), cursor: .init(epoch: 3, seq: 41)),
///                          convo: "c1", for: me.did)
/// ```
public protocol KeyStore: Sendable {
    // MARK: Identities

    /// This store's device identity: created (and saved) on the first call, the same after.
    func deviceIdentity() throws(KeyStoreError) -> DeviceIdentity
    /// Saves an identity (a new one, or one imported). Saving an existing identity is a no-op.
    func saveIdentity(_ identity: DeviceIdentity) throws(KeyStoreError)
    /// The identity with this did, or nil.
    func identity(_ did: DIDKey) throws(KeyStoreError) -> DeviceIdentity?
    /// Every identity's did, sorted.
    func identities() throws(KeyStoreError) -> [DIDKey]
    /// Deletes an identity and everything scoped to it (forward-secure, like every delete).
    func deleteIdentity(_ did: DIDKey) throws(KeyStoreError)

    // MARK: MLS signature keys

    /// Saves (or replaces) `identity`'s signature key for `key.suite`.
    func saveSignatureKey(_ key: SignatureKey, for identity: DIDKey) throws(KeyStoreError)
    /// `identity`'s signature key for `suite`, or nil.
    func signatureKey(suite: UInt16, for identity: DIDKey) throws(KeyStoreError) -> SignatureKey?

    /// Every signature key of `identity`, by suite.
    func signatureKeys(for identity: DIDKey) throws(KeyStoreError) -> [SignatureKey]

    // MARK: Key-package private keys

    /// Saves the private half of a published key package, by its KeyPackageRef.
    func saveKeyPackagePrivateKey(_ secret: [UInt8], reference: [UInt8], for identity: DIDKey) throws(KeyStoreError)
    /// The private half of the key package `reference`, or nil (never saved, or consumed).
    func keyPackagePrivateKey(reference: [UInt8], for identity: DIDKey) throws(KeyStoreError) -> [UInt8]?
    /// The references of `identity`'s key packages not consumed yet, sorted bytewise.
    func keyPackageReferences(for identity: DIDKey) throws(KeyStoreError) -> [[UInt8]]
    /// Deletes a consumed key package's private half; returns whether there was one.
    @discardableResult
    func deleteKeyPackagePrivateKey(reference: [UInt8], for identity: DIDKey) throws(KeyStoreError) -> Bool

    // MARK: Group state and processed cursor

    /// Saves `record` (state and cursor) for `convo` in one transaction.
    func saveGroupState(_ record: GroupStateRecord, convo: String, for identity: DIDKey) throws(KeyStoreError)
    /// The saved state and cursor of `convo`, or nil.
    func groupState(convo: String, for identity: DIDKey) throws(KeyStoreError) -> GroupStateRecord?
    /// The convo ids `identity` holds a group state for, sorted.
    func convos(for identity: DIDKey) throws(KeyStoreError) -> [String]
    /// Deletes `convo`'s group state, cursor, every epoch secret and every attachment key
    /// (leaving or removed).
    func deleteGroup(convo: String, for identity: DIDKey) throws(KeyStoreError)

    // MARK: Epoch secrets

    /// Saves a secret of `convo`'s `epoch` (kept to read late messages of that epoch).
    func saveEpochSecret(_ secret: [UInt8], convo: String, epoch: UInt64, for identity: DIDKey) throws(KeyStoreError)
    /// The secret of `convo`'s `epoch`, or nil.
    func epochSecret(convo: String, epoch: UInt64, for identity: DIDKey) throws(KeyStoreError) -> [UInt8]?
    /// Deletes `convo`'s epoch secrets of every epoch before `epoch`; returns how many.
    @discardableResult
    func deleteEpochSecrets(convo: String, before epoch: UInt64, for identity: DIDKey) throws(KeyStoreError) -> Int

    // MARK: Reviewer-snapshot comment keys

    /// Saves the private half of a reviewer snapshot's comment key (P-256, raw 32 bytes):
    /// reviewers encrypt their comments to its public half, and only this identity can read
    /// them. Saving a snapshot's key again replaces it.
    func saveSnapshotKey(_ privateKey: [UInt8], snapshot: String, for identity: DIDKey) throws(KeyStoreError)
    /// The comment key of `snapshot`, or nil.
    func snapshotKey(snapshot: String, for identity: DIDKey) throws(KeyStoreError) -> [UInt8]?
    /// Every snapshot with a comment key, sorted.
    func snapshotKeyNames(for identity: DIDKey) throws(KeyStoreError) -> [String]
    /// Deletes a snapshot's comment key (forward-secure); true if there was one.
    @discardableResult
    func deleteSnapshotKey(snapshot: String, for identity: DIDKey) throws(KeyStoreError) -> Bool

    // MARK: Shared-attachment content keys

    /// Saves the content key of an attachment shared through `convo` (the asset's SHA-256
    /// hex names it): members fetch and decrypt the attachment with it, in any later epoch.
    /// Deleted with the convo's group (`deleteGroup`). Saving again replaces it.
    func saveAttachmentKey(_ key: [UInt8], asset: String, convo: String, for identity: DIDKey) throws(KeyStoreError)
    /// The content key of `asset` in `convo`, or nil.
    func attachmentKey(asset: String, convo: String, for identity: DIDKey) throws(KeyStoreError) -> [UInt8]?
    /// Every asset of `convo` with a content key, sorted.
    func attachmentKeyAssets(convo: String, for identity: DIDKey) throws(KeyStoreError) -> [String]
}
