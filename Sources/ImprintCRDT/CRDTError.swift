/// An error from the document engine. Every failure to decode bytes or apply a
/// request surfaces as one of these, never as a crash.
public struct CRDTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, stable across versions so callers can branch on it.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let raw: String
        public var description: String { raw }

        /// The bytes are not an Imprint document or change (wrong magic).
        public static let notImprintData = Code(raw: "notImprintData")
        /// A format version this build cannot read.
        public static let unsupportedVersion = Code(raw: "unsupportedVersion")
        /// The bytes end before a complete structure.
        public static let truncated = Code(raw: "truncated")
        /// The checksum does not match the contents.
        public static let checksumMismatch = Code(raw: "checksumMismatch")
        /// Structurally invalid data: impossible lengths, references to unknown ids, bad UTF-8.
        public static let malformed = Code(raw: "malformed")
        /// A declared size exceeds the decoder's limits.
        public static let tooLarge = Code(raw: "tooLarge")
        /// zstd could not decompress a section.
        public static let compression = Code(raw: "compression")
        /// The object id does not exist in this document, or has another type.
        public static let noSuchObject = Code(raw: "noSuchObject")
        /// An index or range outside the sequence.
        public static let indexOutOfBounds = Code(raw: "indexOutOfBounds")
        /// The operation does not apply to this object type.
        public static let wrongObjectType = Code(raw: "wrongObjectType")
        /// A change conflicts with one already present (same actor and seq, other content).
        public static let duplicateSequence = Code(raw: "duplicateSequence")
        /// A path element did not resolve.
        public static let noSuchPath = Code(raw: "noSuchPath")
        /// The requested heads are not all known.
        public static let unknownHeads = Code(raw: "unknownHeads")
        /// The request needs the content of changes a redacted save dropped (for instance
        /// a full save of a document loaded from a redacted one; see ``HistoryRetention``).
        public static let redactedHistory = Code(raw: "redactedHistory")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
