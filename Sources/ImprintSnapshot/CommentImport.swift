import Foundation
import ImprintCRDT
import ImprintStore

/// Merges reviewers' comments into a document as ordinary content, in one change durable in
/// the bundle when ``merge(_:into:)`` returns, so they travel through folders and shared
/// zones like every other edit.
///
/// - A comment or reply becomes root key `comment:<id>` (a map: kind, author, text, start,
///   end, quote, createdAt, target, snapshot, resolved). An id the document already holds is a
///   duplicate and is skipped: importing the same file twice, or a file and the same comments
///   from the server, adds each once.
/// - A resolve sets `resolved` on its target (once).
/// - A comment whose cursors name characters this document does not hold (a snapshot of
///   another document, or of changes not yet merged here) is imported all the same: it shows
///   by its quote until those changes arrive.
public enum CommentImport {
    public struct Result: Sendable, Hashable, Codable {
        public var added = 0
        public var duplicates = 0
        public var resolved = 0
        /// Replies and resolves whose target the document does not hold (yet).
        public var unknownTargets = 0
    }

    @discardableResult
    public static func merge(_ comments: [ReviewComment], into bundle: DocumentBundle) throws -> Result {
        var result = Result()
        let document = bundle.document
        // Comments first, then replies, then resolves, so a file's own targets are found.
        let ordered = comments.sorted { order($0.kind) < order($1.kind) }
        var pending: [ReviewComment] = []
        var seen = Set<String>()
        for comment in ordered {
            let key = DocumentSchema.commentKey(comment.id)
            switch comment.kind {
            case .comment, .reply:
                let present = try document.get(.root, key) != nil
                if seen.contains(comment.id) || present {
                    result.duplicates += 1
                    continue
                }
                if comment.kind == .reply, let target = comment.target, !seen.contains(target),
                   try document.get(.root, DocumentSchema.commentKey(target)) == nil {
                    result.unknownTargets += 1
                }
                seen.insert(comment.id)
                pending.append(comment)
                result.added += 1
            case .resolve:
                pending.append(comment)
            }
        }
        guard !pending.isEmpty else { return result }
        try bundle.change(message: "comments") { tx, _ in
            for comment in pending {
                if comment.kind == .resolve {
                    guard let target = comment.target,
                          case .object(let map, .map)? = try tx.document.get(.root, DocumentSchema.commentKey(target)) else {
                        result.unknownTargets += 1
                        continue
                    }
                    if case .scalar(.bool(true))? = try tx.document.get(map, "resolved") { continue }
                    _ = try tx.put(map, "resolved", .scalar(.bool(true)))
                    result.resolved += 1
                    continue
                }
                guard let map = try tx.put(.root, DocumentSchema.commentKey(comment.id), .map) else { continue }
                _ = try tx.put(map, "kind", .scalar(.string(comment.kind.rawValue)))
                _ = try tx.put(map, "author", .scalar(.string(comment.author)))
                _ = try tx.put(map, "text", .scalar(.string(comment.text)))
                _ = try tx.put(map, "createdAt", .scalar(.int(comment.createdAt)))
                _ = try tx.put(map, "resolved", .scalar(.bool(false)))
                _ = try tx.put(map, "snapshot", .scalar(.string(comment.snapshotId)))
                if let start = comment.start { _ = try tx.put(map, "start", .scalar(.string(start))) }
                if let end = comment.end { _ = try tx.put(map, "end", .scalar(.string(end))) }
                if let quote = comment.quote { _ = try tx.put(map, "quote", .scalar(.string(quote))) }
                if let target = comment.target { _ = try tx.put(map, "target", .scalar(.string(target))) }
            }
        }
        return result
    }

    private static func order(_ kind: ReviewComment.Kind) -> Int {
        switch kind { case .comment: 0; case .reply: 1; case .resolve: 2 }
    }
}
