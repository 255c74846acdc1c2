/// An error raised by ImprintSnapshot: exporting a reviewer snapshot, reading one back, or
/// decoding, decrypting and importing reviewers' comments.
///
/// Errors are values with a stable ``Code`` plus a human-readable context string. Match on
/// `code`, never on the message. Every decoder in this module throws one of these for bad
/// input; none traps and none allocates more than its stated limits.
public struct ReviewSnapshotError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case malformed, unsupportedFormat, tooLarge, wrongPassword, decryptionFailed
            case unknownSnapshot, wrongSnapshot, invalidComment, invalidArgument, compression
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        public var description: String { base.rawValue }

        /// Bytes that are not the structure they claim to be (bad JSON, base64, field types).
        public static let malformed = Code(.malformed)
        /// A format or algorithm name this build does not know.
        public static let unsupportedFormat = Code(.unsupportedFormat)
        /// Input over a stated limit (file size, item count, field length, expansion).
        public static let tooLarge = Code(.tooLarge)
        /// The password does not unwrap the snapshot key.
        public static let wrongPassword = Code(.wrongPassword)
        /// Authenticated decryption failed: the bytes were damaged or tampered with.
        public static let decryptionFailed = Code(.decryptionFailed)
        /// Comments for a snapshot whose comment key this identity does not hold.
        public static let unknownSnapshot = Code(.unknownSnapshot)
        /// Comments or content that name another snapshot than the one they travel with.
        public static let wrongSnapshot = Code(.wrongSnapshot)
        /// A decrypted comment that breaks the comment rules (lengths, anchors, ids).
        public static let invalidComment = Code(.invalidComment)
        /// A caller's argument is out of range (password, iterations, heads).
        public static let invalidArgument = Code(.invalidArgument)
        /// zlib refused to compress or decompress.
        public static let compression = Code(.compression)
    }

    /// What went wrong.
    public let code: Code
    /// Human-readable detail.
    public let context: String

    public init(_ code: Code, _ context: String) {
        self.code = code
        self.context = context
    }

    public var description: String { "\(code): \(context)" }
}
