import Foundation
import ImprintFiles

/// What an owner's home remembers of each snapshot it exported, one JSON file per snapshot
/// in `<home>/snapshots/<id>.json` (mode 0600, written atomically): which document, when, in
/// which form, and for the link form where the record is and the capabilities the link
/// carries (never the content key, which only the link holds). The comment key itself is in
/// the key store (`KeyStore.saveSnapshotKey`).
public struct ReviewSnapshotRegistry: Sendable {
    public struct Entry: Codable, Sendable, Hashable {
        public var snapshotId: String
        public var documentId: String
        public var title: String
        public var bundle: String
        public var form: String
        public var exportedAt: String
        public var expires: String?
        public var heads: [String]
        public var output: String?
        /// Link form: the server, the zone and the capability record name.
        public var server: String?
        public var zoneId: String?
        public var recordName: String?
        public var commentCapability: String?
        public var revoked: Bool?

        public init(snapshotId: String, documentId: String, title: String, bundle: String, form: String, exportedAt: String,
                    expires: String?, heads: [String], output: String?) {
            self.snapshotId = snapshotId
            self.documentId = documentId
            self.title = title
            self.bundle = bundle
            self.form = form
            self.exportedAt = exportedAt
            self.expires = expires
            self.heads = heads
            self.output = output
        }
    }

    public let directory: String

    /// The registry of the home at `homePath`.
    public init(homePath: String) { directory = homePath + "/snapshots" }

    public func save(_ entry: Entry) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try AtomicFile.write(Array(try encoder.encode(entry)), to: path(entry.snapshotId), mode: 0o600)
    }

    public func entry(_ snapshotId: String) throws -> Entry? {
        guard Self.isSnapshotId(snapshotId), FileManager.default.fileExists(atPath: path(snapshotId)) else { return nil }
        return try decode(AtomicFile.read(path(snapshotId), limit: 1 << 20))
    }

    /// Every entry, newest first; unreadable files are skipped.
    public func entries() -> [Entry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".json") && !AtomicFile.isTemporaryName($0) }
            .compactMap { try? decode(AtomicFile.read(directory + "/" + $0, limit: 1 << 20)) }
            .sorted { $0.exportedAt > $1.exportedAt }
    }

    func decode(_ bytes: [UInt8]) throws -> Entry {
        do { return try JSONDecoder().decode(Entry.self, from: Data(bytes)) } catch {
            throw ReviewSnapshotError(.malformed, "snapshot registry entry: \(error)")
        }
    }

    func path(_ snapshotId: String) -> String { directory + "/" + snapshotId + ".json" }

    /// 32 lowercase hex digits.
    public static func isSnapshotId(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
