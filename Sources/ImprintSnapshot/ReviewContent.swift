import ImprintCRDT

/// What a reviewer snapshot shows, before compression and encryption: the document at the
/// exported heads, rendered for reading by the viewer, plus what anchoring comments needs.
///
/// The viewer (`ViewerScript`) renders `body` as Markdown (headings, lists, emphasis, links,
/// code, images named after assets) with text nodes only, never as HTML. A selection in the
/// rendered text maps back to code-point positions of `body`, and ``ReviewAnchors`` turns a
/// position into the engine's stable cursor, so a comment stays on its words however the
/// document changes after the export.
public struct ReviewContent: Codable, Sendable, Hashable {
    /// `imprint-review-content/1`.
    public static let currentFormat = "imprint-review-content/1"

    public var format: String
    /// The snapshot's id (random, 128 bits, hex): binds comments to this snapshot.
    public var snapshotId: String
    /// The document's id (metadata.json), so comments are imported into the right document.
    public var documentId: String
    public var title: String
    /// The body text at `heads` (Markdown source).
    public var body: String
    /// The exported version, as change hashes (hex).
    public var heads: [String]
    /// RFC 3339 UTC.
    public var exportedAt: String
    /// RFC 3339 UTC, or nil: after it the viewer refuses to open (a link's server refuses too).
    public var expires: String?
    public var anchors: ReviewAnchors
    /// The document's comments at `heads`, positioned in `body`.
    public var comments: [Comment]
    /// Images the body names (`![alt](file name or hash)`), inline.
    public var assets: [Asset]
    /// The owner's comment key: a P-256 public key, uncompressed point (65 bytes), base64.
    /// Authenticated with everything else by the payload's AES-GCM tag.
    public var commentKey: String

    /// A comment already in the document when it was exported.
    public struct Comment: Codable, Sendable, Hashable {
        public var id: String
        public var author: String
        public var text: String
        /// Code-point range of `body` the comment covers, or nil when its words are gone.
        public var start: Int?
        public var end: Int?
        public var quote: String
        public var resolved: Bool
        /// Milliseconds since 1970.
        public var createdAt: Int64
        public var inReplyTo: String?
    }

    /// An image asset, inline.
    public struct Asset: Codable, Sendable, Hashable {
        /// The asset's file name in the document.
        public var name: String
        /// SHA-256 hex of the bytes.
        public var hash: String
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp` (decided from the bytes).
        public var mime: String
        /// Base64.
        public var data: String
    }
}

/// The body's visible characters as runs of consecutive engine ids
/// (`ImprintCRDT.CursorRun`), flattened for a compact JSON form: `runs` holds triples
/// `actorIndex, counterDelta, length` in body order, `actors` the actors' hex ids. A run's
/// counter is `counterDelta` plus the end (counter + length) of the same actor's previous run
/// (0 for its first), so typing makes small numbers that compress well. The character at
/// code point `i` belongs to the run whose cumulative start is at most `i`; its cursor is
/// `before:<counter + offset>@<actor>` (the start of a comment) or `after:…` (the end).
public struct ReviewAnchors: Codable, Sendable, Hashable {
    public var actors: [String]
    public var runs: [Int]

    /// The cursor (text form) of the character at code point `position` of the body, on its
    /// `side` (`before` for a comment's start, `after` for its end's last character), as the
    /// viewer computes it; nil outside the body or for malformed runs.
    public func cursor(at position: Int, side: Cursor.Side) -> String? {
        guard position >= 0 else { return nil }
        var start = 0
        var index = 0
        var lastEnd: [Int: Int] = [:]
        while index + 2 < runs.count {
            let actor = runs[index], length = runs[index + 2]
            let counter = (lastEnd[actor] ?? 0) + runs[index + 1]
            lastEnd[actor] = counter + length
            if position < start + length {
                guard actor >= 0, actor < actors.count else { return nil }
                return "\(side == .before ? "before" : "after"):\(counter + position - start)@\(actors[actor])"
            }
            start += length
            index += 3
        }
        return nil
    }

    /// Packs runs in order (the inverse of the reading above).
    init(_ runs: [CursorRun]) {
        var actorIndex: [ActorID: Int] = [:]
        var lastEnd: [Int: Int] = [:]
        actors = []
        self.runs = []
        self.runs.reserveCapacity(runs.count * 3)
        for run in runs {
            let index = actorIndex[run.actor] ?? {
                actors.append(run.actor.hex)
                actorIndex[run.actor] = actors.count - 1
                return actors.count - 1
            }()
            self.runs += [index, run.counter - (lastEnd[index] ?? 0), run.length]
            lastEnd[index] = run.counter + run.length
        }
    }
}
