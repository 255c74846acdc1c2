/// An opaque change token as clients see it: `z1.<incarnation>.<change>`, where the
/// incarnation is a random value drawn when the zone was created (so a token of a deleted and
/// recreated zone is unknown, not silently reused) and `change` the zone's change number it
/// reads after. Anything that does not parse is unknown: 410 `ChangeTokenExpired`.
struct ChangeToken: Sendable, Equatable {
    let incarnation: String
    let change: Int64

    init(incarnation: String, change: Int64) {
        self.incarnation = incarnation
        self.change = change
    }

    /// nil for anything this server never issued in that form.
    init?(parsing text: String) {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard text.utf8.count <= 64, parts.count == 3, Substring(parts[0]) == "z1",
              parts[1].count == 16, parts[1].allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }),
              let change = Int64(Substring(parts[2])), change >= 0, String(change) == Substring(parts[2])
        else { return nil }
        incarnation = String(Substring(parts[1]))
        self.change = change
    }

    var text: String { "z1.\(incarnation).\(change)" }
}
