import ImprintCRDT

/// One thing a reviewer did in the viewer, as the owner decrypts it: a comment on a range of
/// the text, a reply to a comment, or resolving one.
///
/// Comments are anchored by the engine's cursors (text form, `before:…@…` at the start and
/// `after:…@…` at the end) computed in the viewer from ``ReviewAnchors``, with the quoted
/// words as a fallback for when the anchored words are deleted later.
public struct ReviewComment: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable {
        case comment, reply, resolve
    }

    /// Limits every comment must keep (checked on import).
    public static let maxIdLength = 64
    public static let maxAuthorLength = 200
    public static let maxTextLength = 20_000
    public static let maxQuoteLength = 20_000

    /// Random, chosen by the viewer; the same id imported twice is one comment.
    public var id: String
    public var snapshotId: String
    public var kind: Kind
    public var author: String
    public var text: String
    /// Cursors (text form) of the commented range: start (`before:`) and end (`after:`).
    public var start: String?
    public var end: String?
    /// The commented words as the reviewer saw them.
    public var quote: String?
    /// For replies and resolves: the comment meant.
    public var target: String?
    /// Milliseconds since 1970, the reviewer's clock.
    public var createdAt: Int64

    public init(id: String, snapshotId: String, kind: Kind, author: String, text: String, start: String? = nil,
                end: String? = nil, quote: String? = nil, target: String? = nil, createdAt: Int64) {
        self.id = id
        self.snapshotId = snapshotId
        self.kind = kind
        self.author = author
        self.text = text
        self.start = start
        self.end = end
        self.quote = quote
        self.target = target
        self.createdAt = createdAt
    }

    /// Checks the limits and the shape each kind needs.
    func validated() throws(ReviewSnapshotError) -> ReviewComment {
        func fail(_ why: String) -> ReviewSnapshotError { ReviewSnapshotError(.invalidComment, "comment \(id.prefix(64)): \(why)") }
        guard !id.isEmpty, id.count <= Self.maxIdLength,
              id.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" })
        else { throw fail("id must be 1...\(Self.maxIdLength) of [A-Za-z0-9-]") }
        guard author.count <= Self.maxAuthorLength else { throw fail("author longer than \(Self.maxAuthorLength)") }
        guard text.count <= Self.maxTextLength, (quote ?? "").count <= Self.maxQuoteLength else { throw fail("text or quote too long") }
        guard createdAt >= 0 else { throw fail("negative time") }
        switch kind {
        case .comment:
            guard let start, let end, Cursor(start) != nil, Cursor(end) != nil else {
                throw fail("a comment needs start and end cursors")
            }
            guard !text.isEmpty else { throw fail("empty comment") }
        case .reply:
            guard target != nil, !text.isEmpty else { throw fail("a reply needs a target and text") }
        case .resolve:
            guard target != nil else { throw fail("a resolve needs a target") }
        }
        if let target, target.isEmpty || target.count > Self.maxIdLength { throw fail("bad target") }
        return self
    }
}
