/// An opaque change token as clients see it: `z1.<incarnation>.<change>`, where the
/// incarnation is a random value drawn when the zone was created (so a token of a deleted and
/// recreated zone is unknown, not silently reused) and `change` the zone's change number it
/// reads after. Anything that does not parse is unknown: 410 `ChangeTokenExpired`.
///
/// A token from the middle of a read that began after the zone last purged history (purged
/// tombstones, a compaction) is `z2.<incarnation>.<change>.<floor>`: `floor` is the
/// `purged_through` the reader's view already reflects. Its `change` may lie below
/// `purged_through` (the records that survived a purge keep their older change numbers), yet
/// the reader missed nothing, so the token stays valid until the zone purges again
/// (`ZoneChangeFeed.start`). Without it a fresh reader could not page through a compacted zone
/// of more than one page: every token it got would already be "from before the purge".
struct ChangeToken: Sendable, Equatable {
    let incarnation: String
    let change: Int64
    /// The `purged_through` the reader has seen past (z2 tokens only).
    let floor: Int64?

    init(incarnation: String, change: Int64, floor: Int64? = nil) {
        self.incarnation = incarnation
        self.change = change
        self.floor = floor.flatMap { $0 > change ? $0 : nil }
    }

    /// nil for anything this server never issued in that form.
    init?(parsing text: String) {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard text.utf8.count <= 64, parts.count == 3 || parts.count == 4,
              Substring(parts[0]) == (parts.count == 3 ? "z1" : "z2"),
              parts[1].count == 16, parts[1].allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }),
              let change = Self.number(Substring(parts[2]))
        else { return nil }
        incarnation = String(Substring(parts[1]))
        self.change = change
        if parts.count == 4 {
            guard let floor = Self.number(Substring(parts[3])), floor > change else { return nil }
            self.floor = floor
        } else {
            floor = nil
        }
    }

    /// A canonical non-negative decimal.
    private static func number(_ text: Substring) -> Int64? {
        guard let value = Int64(text), value >= 0, String(value) == text else { return nil }
        return value
    }

    var text: String {
        guard let floor else { return "z1.\(incarnation).\(change)" }
        return "z2.\(incarnation).\(change).\(floor)"
    }

    /// Whether a reader at this token has seen the zone past its purge at `purgedThrough`.
    func isPast(purgedThrough: Int64) -> Bool { max(change, floor ?? change) >= purgedThrough }
}
