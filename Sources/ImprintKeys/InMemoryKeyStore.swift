import Foundation
import ImprintEd25519

/// A `KeyStore` in process memory, for tests of the layers above (sync, CLI plumbing) that
/// need a real store's behaviour without files. Same isolation and atomicity as the SQLite
/// store (it passes the same conformance suite); nothing is sealed, nothing reaches a disk,
/// and everything is gone when the value is.
public final class InMemoryKeyStore: KeyStore, @unchecked Sendable {
    private struct EpochKey: Hashable { var convo: String; var epoch: UInt64 }
    private struct Scoped {
        var identity: DeviceIdentity
        var signatureKeys: [UInt16: SignatureKey] = [:]
        var keyPackages: [[UInt8]: [UInt8]] = [:]
        var groups: [String: GroupStateRecord] = [:]
        var epochSecrets: [EpochKey: [UInt8]] = [:]
        var snapshotKeys: [String: [UInt8]] = [:]
        var attachmentKeys: [AttachmentKey: [UInt8]] = [:]
    }
    private struct AttachmentKey: Hashable { var convo: String; var asset: String }

    private let lock = NSLock()
    private var scopes: [DIDKey: Scoped] = [:]
    private var device: DIDKey?

    public init() {}

    private func locked<T>(_ body: () throws(KeyStoreError) -> T) throws(KeyStoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func withScope<T>(_ did: DIDKey, _ body: (inout Scoped) throws(KeyStoreError) -> T) throws(KeyStoreError) -> T {
        try locked { () throws(KeyStoreError) -> T in
            guard var scope = scopes[did] else { throw KeyStoreError(.unknownIdentity, "no identity \(did.did) in this store") }
            let result = try body(&scope)
            scopes[did] = scope
            return result
        }
    }

    public func deviceIdentity() throws(KeyStoreError) -> DeviceIdentity {
        try locked {
            if let device, let scope = scopes[device] { return scope.identity }
            let identity = DeviceIdentity.generate()
            scopes[identity.did] = Scoped(identity: identity)
            device = identity.did
            return identity
        }
    }

    public func saveIdentity(_ identity: DeviceIdentity) throws(KeyStoreError) {
        try locked { if scopes[identity.did] == nil { scopes[identity.did] = Scoped(identity: identity) } }
    }

    public func identity(_ did: DIDKey) throws(KeyStoreError) -> DeviceIdentity? { try locked { scopes[did]?.identity } }

    public func identities() throws(KeyStoreError) -> [DIDKey] { try locked { scopes.keys.sorted { $0.did < $1.did } } }

    public func deleteIdentity(_ did: DIDKey) throws(KeyStoreError) {
        try locked {
            scopes[did] = nil
            if device == did { device = nil }
        }
    }

    public func saveSignatureKey(_ key: SignatureKey, for identity: DIDKey) throws(KeyStoreError) {
        try withScope(identity) { $0.signatureKeys[key.suite] = key }
    }

    public func signatureKey(suite: UInt16, for identity: DIDKey) throws(KeyStoreError) -> SignatureKey? {
        try locked { scopes[identity]?.signatureKeys[suite] }
    }

    public func signatureKeys(for identity: DIDKey) throws(KeyStoreError) -> [SignatureKey] {
        try locked { (scopes[identity]?.signatureKeys.values).map { $0.sorted { $0.suite < $1.suite } } ?? [] }
    }

    public func keyPackageReferences(for identity: DIDKey) throws(KeyStoreError) -> [[UInt8]] {
        try locked { (scopes[identity]?.keyPackages.keys).map { $0.sorted { $0.lexicographicallyPrecedes($1) } } ?? [] }
    }

    public func saveKeyPackagePrivateKey(_ secret: [UInt8], reference: [UInt8], for identity: DIDKey) throws(KeyStoreError) {
        guard !reference.isEmpty, reference.count <= 64 else { throw KeyStoreError(.invalidArgument, "a key-package reference is 1...64 bytes") }
        try withScope(identity) { $0.keyPackages[reference] = secret }
    }

    public func keyPackagePrivateKey(reference: [UInt8], for identity: DIDKey) throws(KeyStoreError) -> [UInt8]? {
        try locked { scopes[identity]?.keyPackages[reference] }
    }

    @discardableResult
    public func deleteKeyPackagePrivateKey(reference: [UInt8], for identity: DIDKey) throws(KeyStoreError) -> Bool {
        try locked { scopes[identity]?.keyPackages.removeValue(forKey: reference) != nil }
    }

    public func saveGroupState(_ record: GroupStateRecord, convo: String, for identity: DIDKey) throws(KeyStoreError) {
        try Self.check(convo: convo, cursor: record.cursor)
        try withScope(identity) { $0.groups[convo] = record }
    }

    public func groupState(convo: String, for identity: DIDKey) throws(KeyStoreError) -> GroupStateRecord? {
        try locked { scopes[identity]?.groups[convo] }
    }

    public func convos(for identity: DIDKey) throws(KeyStoreError) -> [String] {
        try locked { (scopes[identity]?.groups.keys).map { $0.sorted() } ?? [] }
    }

    public func deleteGroup(convo: String, for identity: DIDKey) throws(KeyStoreError) {
        try locked {
            guard var scope = scopes[identity] else { return }
            scope.groups[convo] = nil
            scope.epochSecrets = scope.epochSecrets.filter { $0.key.convo != convo }
            scope.attachmentKeys = scope.attachmentKeys.filter { $0.key.convo != convo }
            scopes[identity] = scope
        }
    }

    public func saveEpochSecret(_ secret: [UInt8], convo: String, epoch: UInt64, for identity: DIDKey) throws(KeyStoreError) {
        try Self.check(convo: convo, cursor: ProcessedCursor(epoch: epoch, seq: 0))
        try withScope(identity) { $0.epochSecrets[EpochKey(convo: convo, epoch: epoch)] = secret }
    }

    public func epochSecret(convo: String, epoch: UInt64, for identity: DIDKey) throws(KeyStoreError) -> [UInt8]? {
        try locked { scopes[identity]?.epochSecrets[EpochKey(convo: convo, epoch: epoch)] }
    }

    @discardableResult
    public func deleteEpochSecrets(convo: String, before epoch: UInt64, for identity: DIDKey) throws(KeyStoreError) -> Int {
        try locked {
            guard let secrets = scopes[identity]?.epochSecrets else { return 0 }
            let kept = secrets.filter { !($0.key.convo == convo && $0.key.epoch < epoch) }
            scopes[identity]?.epochSecrets = kept
            return secrets.count - kept.count
        }
    }

    public func saveSnapshotKey(_ privateKey: [UInt8], snapshot: String, for identity: DIDKey) throws(KeyStoreError) {
        guard !snapshot.isEmpty, snapshot.utf8.count <= 128 else { throw KeyStoreError(.invalidArgument, "a snapshot id is 1...128 bytes") }
        try withScope(identity) { $0.snapshotKeys[snapshot] = privateKey }
    }

    public func snapshotKey(snapshot: String, for identity: DIDKey) throws(KeyStoreError) -> [UInt8]? {
        try locked { scopes[identity]?.snapshotKeys[snapshot] }
    }

    public func snapshotKeyNames(for identity: DIDKey) throws(KeyStoreError) -> [String] {
        try locked { (scopes[identity]?.snapshotKeys.keys).map { $0.sorted() } ?? [] }
    }

    @discardableResult
    public func deleteSnapshotKey(snapshot: String, for identity: DIDKey) throws(KeyStoreError) -> Bool {
        try locked { scopes[identity]?.snapshotKeys.removeValue(forKey: snapshot) != nil }
    }

    /// The same argument rules as the SQLite store, so both behave alike.
    private static func check(convo: String, cursor: ProcessedCursor) throws(KeyStoreError) {
        guard !convo.isEmpty, convo.utf8.count <= 512 else { throw KeyStoreError(.invalidArgument, "a convo id is 1...512 bytes") }
        guard cursor.epoch <= UInt64(Int64.max), cursor.seq <= UInt64(Int64.max) else {
            throw KeyStoreError(.invalidArgument, "epoch or seq out of range")
        }
    }

    public func saveAttachmentKey(_ key: [UInt8], asset: String, convo: String, for identity: DIDKey) throws(KeyStoreError) {
        try Self.check(convo: convo, cursor: .start)
        guard !asset.isEmpty, asset.utf8.count <= 128 else { throw KeyStoreError(.invalidArgument, "an asset id is 1...128 bytes") }
        try withScope(identity) { $0.attachmentKeys[AttachmentKey(convo: convo, asset: asset)] = key }
    }

    public func attachmentKey(asset: String, convo: String, for identity: DIDKey) throws(KeyStoreError) -> [UInt8]? {
        try locked { scopes[identity]?.attachmentKeys[AttachmentKey(convo: convo, asset: asset)] }
    }

    public func attachmentKeyAssets(convo: String, for identity: DIDKey) throws(KeyStoreError) -> [String] {
        try locked { (scopes[identity]?.attachmentKeys.keys.filter { $0.convo == convo }.map(\.asset) ?? []).sorted() }
    }
}
