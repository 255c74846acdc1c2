import Foundation

/// The folder store's change token: which entries of which writer the holder has seen.
///
/// Entries of other writers arrive whenever the sync tool delivers them, in any order (entry 7
/// of a writer may land before its entry 6), so a single position cannot describe "seen". The
/// token is a version vector with holes: per writer, `low` (every entry 1...low seen) and
/// `above` (entries past `low` seen out of order). A fetch returns the entries the vector does
/// not cover, whenever they arrived, and the next token adds them; a hole fills (and `above`
/// folds into `low`) when the late entry comes. Damaged entries are left out of the vector, so
/// a repaired file is delivered later.
///
/// Text form: `f1.` + base64 of `{"z": incarnation, "w": {writer: [low, above...]}}`. The
/// incarnation is the zone's creation id, so a token from a deleted and re-created zone (or
/// any other zone) is expired, as is one that does not decode.
struct FolderChangeToken: Sendable, Hashable {
    struct Progress: Sendable, Hashable {
        var low: UInt64 = 0
        var above: Set<UInt64> = []

        func contains(_ seq: UInt64) -> Bool { seq <= low || above.contains(seq) }

        mutating func insert(_ seq: UInt64) {
            guard !contains(seq) else { return }
            above.insert(seq)
            while above.remove(low + 1) != nil { low += 1 }
        }
    }

    var incarnation: String
    var writers: [String: Progress] = [:]

    func contains(writer: String, seq: UInt64) -> Bool { writers[writer]?.contains(seq) ?? false }

    mutating func insert(writer: String, seq: UInt64) { writers[writer, default: Progress()].insert(seq) }

    static let prefix = "f1."
    /// Far beyond any real vector (a writer needs one number per hole), small enough to parse.
    static let maximumTextBytes = 1 << 20

    var token: ZoneChangeToken {
        var vector: [String: [UInt64]] = [:]
        for (writer, progress) in writers { vector[writer] = [progress.low] + progress.above.sorted() }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = (try? encoder.encode(Wire(z: incarnation, w: vector))) ?? Data()
        return ZoneChangeToken(rawValue: Self.prefix + json.base64EncodedString())
    }

    private struct Wire: Codable {
        var z: String
        var w: [String: [UInt64]]
    }

    /// The token's vector if it is a folder token of the zone incarnation `incarnation`.
    init(parsing token: ZoneChangeToken, incarnation: String) throws {
        let expired = ZoneError(.changeTokenExpired, "not a token of this folder zone")
        let text = token.rawValue
        guard text.utf8.count <= Self.maximumTextBytes, text.hasPrefix(Self.prefix),
              let json = Data(base64Encoded: String(text.dropFirst(Self.prefix.count))),
              let wire = try? JSONDecoder().decode(Wire.self, from: json),
              wire.z == incarnation
        else { throw expired }
        self.incarnation = incarnation
        for (writer, seqs) in wire.w {
            guard FolderZoneLayout.isWriterID(writer), let low = seqs.first, low <= FolderZoneLayout.maximumSeq else { throw expired }
            var progress = Progress(low: low)
            for seq in seqs.dropFirst() {
                guard seq > low, seq <= FolderZoneLayout.maximumSeq else { throw expired }
                progress.above.insert(seq)
            }
            writers[writer] = progress
        }
    }

    init(incarnation: String) {
        self.incarnation = incarnation
    }
}
