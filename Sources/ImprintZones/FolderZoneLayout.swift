/// Where a folder zone store keeps what (all names lowercase ASCII):
/// ```
/// <root>/zones/<escaped zone id>/
///     zone-<writer>.json                  a creation marker per writer that created the zone
///     entries/<writer>/<seq:016x>.rec     the writer's change log, one atomic batch per file
///     assets/<writer>/<sha256 hex>        the assets the writer uploaded, content-addressed
/// ```
/// Every file has exactly one writer, so two machines never write the same file. A reader
/// takes only names of exactly these shapes and ignores everything else: sync tools'
/// temporaries (`.syncthing.*.tmp`, `~syncthing~*.tmp`, `.dropbox.cache`, `*.icloud`
/// placeholders), their conflict copies (`.sync-conflict-`, `(conflicted copy …)`,
/// `_conflict-`), and this store's own temporaries (`.<name>.tmp-…`) all fail the shapes.
struct FolderZoneLayout: Sendable {
    let root: String

    var zonesPath: String { root + "/zones" }

    func zonePath(_ zoneId: String) -> String { zonesPath + "/" + ZoneDirectoryName.encode(zoneId) }
    func entriesPath(_ zoneId: String) -> String { zonePath(zoneId) + "/entries" }
    func entriesPath(_ zoneId: String, writer: String) -> String { entriesPath(zoneId) + "/" + writer }
    func assetsPath(_ zoneId: String) -> String { zonePath(zoneId) + "/assets" }
    func assetsPath(_ zoneId: String, writer: String) -> String { assetsPath(zoneId) + "/" + writer }
    func markerPath(_ zoneId: String, writer: String) -> String { zonePath(zoneId) + "/zone-\(writer).json" }

    static func entryFileName(_ seq: UInt64) -> String {
        let hex = String(seq, radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex + ".rec"
    }

    /// Entry numbers stop at 2^62, so counting on from any name never overflows.
    static let maximumSeq: UInt64 = 1 << 62

    /// The sequence number of an entry file name, or nil for every other name.
    static func entrySeq(fileName name: String) -> UInt64? {
        let utf8 = Array(name.utf8)
        guard utf8.count == 20, utf8[16...].elementsEqual(".rec".utf8),
              utf8[..<16].allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
              let seq = UInt64(String(decoding: utf8[..<16], as: UTF8.self), radix: 16), seq > 0, seq <= maximumSeq
        else { return nil }
        return seq
    }

    /// The writer of a `zone-<writer>.json` marker name, or nil.
    static func markerWriter(fileName name: String) -> String? {
        guard name.hasPrefix("zone-"), name.hasSuffix(".json") else { return nil }
        let writer = String(name.dropFirst(5).dropLast(5))
        return isWriterID(writer) ? writer : nil
    }

    /// Writer ids (device ids): 1...64 of `a-z`, `0-9`, `-`, starting with a letter or digit.
    static func isWriterID(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        guard (1...64).contains(utf8.count), utf8[0] != UInt8(ascii: "-") else { return false }
        return utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "-") }
    }
}
