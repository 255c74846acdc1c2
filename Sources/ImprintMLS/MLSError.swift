/// An error raised by ImprintMLS.
///
/// Errors are values with a stable ``Code`` plus a human-readable context
/// string. Match on `code`, never on the message.
public struct MLSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case truncated, nonMinimalVarint, invalidVarint, lengthOverflow, trailingBytes
            case invalidValue, unsupportedCipherSuite, invalidKey, cryptoFailure
            case signatureInvalid, decryptionFailed, invalidTree, invalidParentHash
            case invalidLeafNode, invalidKeyPackage, invalidProposal, invalidCommit
            case invalidMessage, wrongGroup, wrongEpoch, secretConsumed, generationTooFar
            case membershipTagInvalid, confirmationTagInvalid, invalidState, notFound, removedFromGroup
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        public var description: String { base.rawValue }

        /// Input ended before a value was complete.
        public static let truncated = Code(.truncated)
        /// A variable-length integer was not in its shortest form (RFC 9420 §2.1.2).
        public static let nonMinimalVarint = Code(.nonMinimalVarint)
        /// A variable-length integer used the reserved `11` prefix.
        public static let invalidVarint = Code(.invalidVarint)
        /// A length or count computation overflowed or exceeded a limit.
        public static let lengthOverflow = Code(.lengthOverflow)
        /// Bytes remained after a complete structure was decoded.
        public static let trailingBytes = Code(.trailingBytes)
        /// A field held a value outside its permitted range.
        public static let invalidValue = Code(.invalidValue)
        /// The cipher suite is unknown or not supported by this implementation.
        public static let unsupportedCipherSuite = Code(.unsupportedCipherSuite)
        /// A key had the wrong size or was not a valid point/scalar.
        public static let invalidKey = Code(.invalidKey)
        /// A cryptographic primitive failed.
        public static let cryptoFailure = Code(.cryptoFailure)
        /// A signature did not verify.
        public static let signatureInvalid = Code(.signatureInvalid)
        /// Authenticated decryption failed.
        public static let decryptionFailed = Code(.decryptionFailed)
        /// A ratchet tree was malformed or failed validation.
        public static let invalidTree = Code(.invalidTree)
        /// A parent hash did not verify.
        public static let invalidParentHash = Code(.invalidParentHash)
        /// A LeafNode failed validation.
        public static let invalidLeafNode = Code(.invalidLeafNode)
        /// A KeyPackage failed validation.
        public static let invalidKeyPackage = Code(.invalidKeyPackage)
        /// A proposal failed validation.
        public static let invalidProposal = Code(.invalidProposal)
        /// A commit failed validation.
        public static let invalidCommit = Code(.invalidCommit)
        /// A framed message failed validation.
        public static let invalidMessage = Code(.invalidMessage)
        /// A message was for another group.
        public static let wrongGroup = Code(.wrongGroup)
        /// A message was for an epoch that is not available.
        public static let wrongEpoch = Code(.wrongEpoch)
        /// The key for this generation was already used and deleted.
        public static let secretConsumed = Code(.secretConsumed)
        /// A generation was beyond the permitted look-ahead.
        public static let generationTooFar = Code(.generationTooFar)
        /// A PublicMessage membership tag did not verify.
        public static let membershipTagInvalid = Code(.membershipTagInvalid)
        /// A confirmation tag did not verify.
        public static let confirmationTagInvalid = Code(.confirmationTagInvalid)
        /// An operation was not valid in the current state.
        public static let invalidState = Code(.invalidState)
        /// A referenced item was not found.
        public static let notFound = Code(.notFound)
        /// We are no longer a member (used internally; see ``ProcessedMessage/removed(epoch:)``).
        public static let removedFromGroup = Code(.removedFromGroup)
    }

    /// The kind of failure.
    public let code: Code
    /// Free-form context for humans (not stable).
    public let context: String

    /// An error with a code and optional context.
    public init(_ code: Code, _ context: String = "") {
        self.code = code
        self.context = context
    }

    public var description: String { context.isEmpty ? "MLSError(\(code))" : "MLSError(\(code)): \(context)" }
}
