import ImprintCRDT
import ImprintStore

/// A comment as the document holds it (root key `comment:<id>`, a map; the fields are in
/// docs/document-schema.md), with where its words are now.
///
/// A comment is anchored by two cursors, so it moves with its words through every edit made
/// before, inside or after its range, on any device. If every anchored character was deleted,
/// the quoted words are searched for instead (``Anchoring/quote``); if they are gone too, the
/// comment is ``Anchoring/detached`` and keeps its quote.
///
/// ```swift
/// for comment in try DocumentComment.all(in: bundle.document, body: bundle.body) {
///     print(comment.author, comment.coveredText ?? comment.quote)
/// }
/// ```
public struct DocumentComment: Sendable, Hashable {
    /// How ``range`` was found.
    public enum Anchoring: String, Sendable, Codable {
        /// From the cursors: the words it was made on.
        case cursors
        /// From the quoted words, the anchored ones having been deleted.
        case quote
        /// Nowhere: its words are gone (replies have no range of their own either).
        case detached
    }

    public var id: String
    /// `comment` or `reply`.
    public var kind: String
    public var author: String
    public var text: String
    public var quote: String
    public var createdAt: Int64
    public var resolved: Bool
    /// For replies: the comment replied to.
    public var target: String?
    /// The reviewer snapshot it came through, if any.
    public var snapshot: String?
    public var start: Cursor?
    public var end: Cursor?
    /// Code-point range of the body it covers now.
    public var range: Range<Int>?
    public var anchoring: Anchoring
    /// The body's text in ``range``.
    public var coveredText: String?

    /// Every comment of `document`, oldest first (then by id).
    public static func all(in document: Document, body: ObjectID) throws -> [DocumentComment] {
        let text = Array(try document.text(body).unicodeScalars)
        var comments: [DocumentComment] = []
        for key in try document.keys(.root) where key.hasPrefix(DocumentSchema.commentKeyPrefix) {
            guard case .object(let map, .map)? = try document.get(.root, key) else { continue }
            func string(_ field: String) throws -> String? { try document.get(map, field)?.string }
            var comment = DocumentComment(
                id: String(key.dropFirst(DocumentSchema.commentKeyPrefix.count)),
                kind: try string("kind") ?? "comment", author: try string("author") ?? "",
                text: try string("text") ?? "", quote: try string("quote") ?? "",
                createdAt: { if case .scalar(.int(let v))? = $0 { v } else { 0 } }(try document.get(map, "createdAt")),
                resolved: { if case .scalar(.bool(let v))? = $0 { v } else { false } }(try document.get(map, "resolved")),
                target: try string("target"), snapshot: try string("snapshot"),
                start: try string("start").flatMap(Cursor.init), end: try string("end").flatMap(Cursor.init),
                range: nil, anchoring: .detached, coveredText: nil)
            comment.locate(in: document, body: body, text: text)
            comments.append(comment)
        }
        return comments.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    mutating func locate(in document: Document, body: ObjectID, text: [Unicode.Scalar]) {
        if let start, let end, let from = try? document.index(of: start, in: body),
           let to = try? document.index(of: end, in: body), from < to {
            range = from..<to
            anchoring = .cursors
        } else if !quote.isEmpty, let found = Self.find(Array(quote.unicodeScalars), in: text,
                                                         near: start.flatMap { try? document.index(of: $0, in: body) } ?? 0) {
            range = found
            anchoring = .quote
        }
        if let range { coveredText = String(String.UnicodeScalarView(text[range])) }
    }

    /// The occurrence of `needle` in `haystack` nearest to `near`.
    static func find(_ needle: [Unicode.Scalar], in haystack: [Unicode.Scalar], near: Int) -> Range<Int>? {
        guard !needle.isEmpty, needle.count <= haystack.count else { return nil }
        var best: Range<Int>?
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) {
                if best == nil || abs(i - near) < abs(best!.lowerBound - near) { best = i..<(i + needle.count) }
                if i > near { break }
            }
        }
        return best
    }
}
