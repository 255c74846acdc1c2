import Foundation
import ImprintFiles

/// `metadata.json`: what a bundle is, readable without the CRDT engine.
///
/// Known keys are typed; every other key is kept in `extra` and written back unchanged, so
/// a file written by a newer version survives being rewritten by this one.
public struct BundleMetadata: Sendable, Equatable, Codable {
    /// The bundle format this writer produced.
    public static let currentFormatVersion = 1

    /// Format version of the writer that last wrote the bundle.
    public var formatVersion: Int
    /// Oldest format version a reader must understand to open the bundle safely. A reader
    /// with a lower version refuses (`.unsupportedVersion`); a higher `formatVersion` alone
    /// is fine (new files are ignored).
    public var minimumReaderVersion: Int
    /// Stable identity of the document (shared by all its copies).
    public var documentID: String
    public var title: String
    public var created: Date
    public var modified: Date
    /// Device or person identities that have written to the document, sorted, no duplicates.
    public var authors: [String]
    /// Keys this version does not know, preserved verbatim.
    public var extra: [String: JSONValue]

    public init(documentID: String, title: String, created: Date, modified: Date? = nil,
                authors: [String] = [], extra: [String: JSONValue] = [:]) {
        self.formatVersion = Self.currentFormatVersion
        self.minimumReaderVersion = 1
        self.documentID = documentID
        self.title = title
        self.created = Self.wholeSeconds(created)
        self.modified = Self.wholeSeconds(modified ?? created)
        self.authors = Array(Set(authors)).sorted()
        self.extra = extra
    }

    enum Key: String, CaseIterable {
        case formatVersion, minimumReaderVersion, documentID = "documentId", title, created, modified, authors
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        func key(_ k: Key) -> AnyKey { AnyKey(k.rawValue) }
        formatVersion = try c.decode(Int.self, forKey: key(.formatVersion))
        minimumReaderVersion = try c.decodeIfPresent(Int.self, forKey: key(.minimumReaderVersion)) ?? 1
        documentID = try c.decode(String.self, forKey: key(.documentID))
        title = try c.decodeIfPresent(String.self, forKey: key(.title)) ?? ""
        created = try Self.decodeDate(c, key(.created))
        modified = try Self.decodeDate(c, key(.modified))
        authors = try c.decodeIfPresent([String].self, forKey: key(.authors)) ?? []
        let known = Set(Key.allCases.map(\.rawValue))
        var extra: [String: JSONValue] = [:]
        for k in c.allKeys where !known.contains(k.stringValue) {
            extra[k.stringValue] = try c.decode(JSONValue.self, forKey: k)
        }
        self.extra = extra
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        for (k, v) in extra { try c.encode(v, forKey: AnyKey(k)) }
        try c.encode(formatVersion, forKey: AnyKey(Key.formatVersion.rawValue))
        try c.encode(minimumReaderVersion, forKey: AnyKey(Key.minimumReaderVersion.rawValue))
        try c.encode(documentID, forKey: AnyKey(Key.documentID.rawValue))
        try c.encode(title, forKey: AnyKey(Key.title.rawValue))
        try c.encode(Self.formatDate(created), forKey: AnyKey(Key.created.rawValue))
        try c.encode(Self.formatDate(modified), forKey: AnyKey(Key.modified.rawValue))
        try c.encode(authors, forKey: AnyKey(Key.authors.rawValue))
    }

    // MARK: Files

    /// Largest metadata.json accepted (1 MiB).
    public static let maxFileLength = 1 << 20

    public static func decode(_ bytes: [UInt8], path: String? = nil) throws -> BundleMetadata {
        let metadata: BundleMetadata
        do {
            metadata = try JSONDecoder().decode(BundleMetadata.self, from: Data(bytes))
        } catch {
            throw BundleError(.corrupt, "metadata.json does not parse: \(error)", path: path)
        }
        guard metadata.minimumReaderVersion <= currentFormatVersion else {
            throw BundleError(.unsupportedVersion,
                              "bundle needs reader version \(metadata.minimumReaderVersion), this is \(currentFormatVersion)",
                              path: path)
        }
        return metadata
    }

    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var bytes = [UInt8](try encoder.encode(self))
        bytes.append(0x0A)
        return bytes
    }

    public static func read(at path: String) throws -> BundleMetadata {
        try decode(BundleError.convertingFileErrors { try AtomicFile.read(path, limit: maxFileLength) }, path: path)
    }

    /// Writes atomically. A writer that read an older file keeps its `extra` keys; the
    /// format version written is never lowered below the one read.
    public func write(to path: String) throws {
        var copy = self
        copy.formatVersion = max(formatVersion, Self.currentFormatVersion)
        try AtomicFile.write(copy.encoded(), to: path)
    }

    /// Combines two copies of one document's metadata (a sync conflict copy of
    /// metadata.json): the later `modified` wins for title and unknown keys, `created` is the
    /// earlier one, authors are the union, versions the maximum.
    public func merged(with other: BundleMetadata) -> BundleMetadata {
        let (newer, older) = other.modified > modified ? (other, self) : (self, other)
        var result = newer
        result.created = min(created, other.created)
        result.authors = Array(Set(authors).union(other.authors)).sorted()
        result.formatVersion = max(formatVersion, other.formatVersion)
        result.minimumReaderVersion = max(minimumReaderVersion, other.minimumReaderVersion)
        result.extra = older.extra.merging(newer.extra) { _, new in new }
        return result
    }

    // MARK: Dates: RFC 3339 UTC with whole seconds, e.g. "2026-11-21T05:20:00Z".

    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970).rounded(.down))
    }

    static func formatDate(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!))
    }

    static func decodeDate(_ c: KeyedDecodingContainer<AnyKey>, _ key: AnyKey) throws -> Date {
        let text = try c.decode(String.self, forKey: key)
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not an RFC 3339 date: \(text)")
    }
}
