/// An error raised by ImprintSync.
///
/// A value with a stable ``Code`` and a human-readable message; match on `code`, never on the
/// message. Errors of the layers below (Delivery Service, zones, MLS, key store, bundle) are
/// passed through as they are when they say what went wrong better than a wrapper would.
public struct SyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case notShared, alreadyShared, noIdentity, noServer, notMember, removed
            case noWelcome, noKeyPackage, credentialMismatch, forbidden, externalCommit
            case rosterMismatch, forkDetected, staleState, invalidPayload, missingCommit
            case conflictRetriesExhausted, invalidArgument, io
            case unknownAsset, assetNotInZone, assetTampered
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        public var description: String { base.rawValue }

        /// The bundle is not shared (no `shared` entry in its metadata.json, or no group state
        /// for it in this identity's key store).
        public static let notShared = Code(.notShared)
        /// The bundle is already shared through a convo.
        public static let alreadyShared = Code(.alreadyShared)
        /// This home has no identity yet (`imprint identity create`).
        public static let noIdentity = Code(.noIdentity)
        /// No server is known (no `--server`, no `$IMPRINT_SERVER`, none in the bundle).
        public static let noServer = Code(.noServer)
        /// This identity is not a member of the convo (never was, or no longer).
        public static let notMember = Code(.notMember)
        /// A commit removed this identity from the group: it reads nothing newer.
        public static let removed = Code(.removed)
        /// The Delivery Service holds no Welcome for this identity in that convo.
        public static let noWelcome = Code(.noWelcome)
        /// The Delivery Service had no key package for an invited DID.
        public static let noKeyPackage = Code(.noKeyPackage)
        /// A key package or leaf whose credential does not name its DID, or whose signature
        /// key is not that `did:key`'s key: the Delivery Service (or someone) swapped it.
        public static let credentialMismatch = Code(.credentialMismatch)
        /// The group's policy forbids it (only admins add and remove members).
        public static let forbidden = Code(.forbidden)
        /// An external commit: refused, members join only through a Welcome.
        public static let externalCommit = Code(.externalCommit)
        /// The MLS roster and the Delivery Service's roster disagree.
        public static let rosterMismatch = Code(.rosterMismatch)
        /// Members were shown different histories of the group (an epoch authenticator
        /// differs from this member's for the same epoch).
        public static let forkDetected = Code(.forkDetected)
        /// This home's group state is behind what it already used (a copied or restored home):
        /// it refuses to send until it has rejoined.
        public static let staleState = Code(.staleState)
        /// A decrypted payload that is not a valid Imprint sync payload.
        public static let invalidPayload = Code(.invalidPayload)
        /// The Delivery Service returned a commit entry without its bytes.
        public static let missingCommit = Code(.missingCommit)
        /// Commits kept losing the race for an epoch.
        public static let conflictRetriesExhausted = Code(.conflictRetriesExhausted)
        /// An argument out of range.
        public static let invalidArgument = Code(.invalidArgument)
        /// A local file could not be read or written.
        public static let io = Code(.io)
        /// No member has shared an asset with this id in this document (or its key is not
        /// in this identity's key store).
        public static let unknownAsset = Code(.unknownAsset)
        /// An asset was announced but its records are not (all) in the zone: fetch again later.
        public static let assetNotInZone = Code(.assetNotInZone)
        /// An asset's records do not decrypt, or decrypt to bytes whose SHA-256 is not the
        /// asset's id: someone changed them. Nothing is added to the bundle.
        public static let assetTampered = Code(.assetTampered)
    }

    /// The kind of failure.
    public let code: Code
    /// Context for humans (not stable).
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    public static func == (lhs: SyncError, rhs: SyncError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
