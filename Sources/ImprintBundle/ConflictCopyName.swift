/// Recognises the names file-sync tools give to conflict copies, and maps each back to the
/// name of the file (or `.imprint` bundle directory) it is a copy of.
///
/// Patterns (sources are cited in docs/bundle-format.md, "Conflict copies"):
///
/// | tool | copy name |
/// |---|---|
/// | Syncthing | `stem.sync-conflict-YYYYMMDD-HHMMSS[-DEVICE7].ext` |
/// | Nextcloud / ownCloud | `stem (conflicted copy [user ]YYYY-MM-DD HHMMSS).ext` |
/// | Nextcloud / ownCloud (older clients) | `stem_conflict-YYYYMMDD-HHMMSS.ext` |
/// | Dropbox | `stem ([Owner's ]conflicted copy[ YYYY-MM-DD][ (N)]).ext`, `stem (Case Conflict).ext`, `stem (Unicode Encoding Conflict).ext` |
/// | iCloud Drive | `stem N.ext` with N >= 2 (`paper 2.imprint`) |
/// | OneDrive | `stem-MACHINE.ext`, MACHINE an uppercase Windows computer name (`-DESKTOP-4PIIBJ1`) |
///
/// `ext` is everything after the last dot (absent for names without one). A copy of a copy
/// (`a.sync-conflict-….sync-conflict-….log`) parses one layer at a time; `rootOriginal(of:)`
/// peels all of them. iCloud's and OneDrive's forms are inherently ambiguous for arbitrary
/// names ("Chapter 12.txt"); inside a bundle they are not, because canonical bundle file
/// names never contain spaces or uppercase letters (see `DeviceID`).
public struct ConflictCopyName: Sendable, Equatable {
    public enum Tool: String, Sendable, Equatable, CaseIterable {
        case syncthing
        case nextcloud
        case nextcloudLegacy
        case dropbox
        case iCloudDrive
        case oneDrive
    }

    /// The tool whose naming scheme matched.
    public var tool: Tool
    /// The name this is a copy of (one layer peeled).
    public var original: String
    /// What the tool put in the name to tell copies apart (device, date, number), verbatim.
    public var marker: String

    public init(tool: Tool, original: String, marker: String) {
        self.tool = tool
        self.original = original
        self.marker = marker
    }

    /// The conflict-copy reading of `name` (a single path component), or nil when `name` is
    /// not a conflict copy.
    public static func parse(_ name: String) -> ConflictCopyName? {
        guard !name.isEmpty, !name.contains("/") else { return nil }
        // Fast path: every pattern needs a space, "_conflict-", ".sync-conflict-" or an
        // uppercase letter (OneDrive). Canonical bundle names have none of these.
        guard name.contains(" ") || name.contains("_conflict-") || name.contains(".sync-conflict-")
                || name.unicodeScalars.contains(where: { $0.properties.isUppercase })
        else { return nil }
        for rule in rules {
            if let match = rule.match(name) { return match }
        }
        return nil
    }

    /// Peels every conflict-copy layer: `a.sync-conflict-1.sync-conflict-2.log` → `a.log`.
    public static func rootOriginal(of name: String) -> String? {
        var current = name
        var peeled = false
        for _ in 0..<16 {
            guard let parsed = parse(current) else { break }
            current = parsed.original
            peeled = true
        }
        return peeled ? current : nil
    }

    // MARK: Rules

    private struct Rule: Sendable {
        let tool: Tool
        /// A regular expression with named groups `stem`, `marker`, and optional `ext`.
        let pattern: String
        /// Extra check on the marker (e.g. "contains an uppercase letter").
        let acceptMarker: @Sendable (Substring) -> Bool

        func match(_ name: String) -> ConflictCopyName? {
            guard let regex = try? Regex(pattern),
                  let m = try? regex.wholeMatch(in: name),
                  let stem = m.output["stem"]?.substring, !stem.isEmpty,
                  let marker = m.output["marker"]?.substring,
                  acceptMarker(marker)
            else { return nil }
            let ext = m.output["ext"]?.substring.map(String.init) ?? ""
            return ConflictCopyName(tool: tool, original: String(stem) + ext, marker: String(marker))
        }
    }

    private static let ext = #"(?<ext>\.[^.]+)?"#

    private static let rules: [Rule] = [
        Rule(tool: .syncthing,
             pattern: #"(?<stem>.+)\.sync-conflict-(?<marker>\d{8}-\d{6}(?:-[A-Z0-9]{7})?)"# + ext,
             acceptMarker: { _ in true }),
        Rule(tool: .nextcloud,
             pattern: #"(?<stem>.+?) \((?<marker>conflicted copy (?:[^()]+ )?\d{4}-\d{2}-\d{2} \d{6})\)"# + ext,
             acceptMarker: { _ in true }),
        Rule(tool: .nextcloudLegacy,
             pattern: #"(?<stem>.+?)_(?<marker>conflict-\d{8}-\d{6})"# + ext,
             acceptMarker: { _ in true }),
        Rule(tool: .dropbox,
             pattern: #"(?<stem>.+?) \((?<marker>(?:[^()]+(?:'|’)s )?conflicted copy(?: \d{4}-\d{2}-\d{2})?(?: \(\d+\))?|Case Conflict(?: \d+)?|Unicode Encoding Conflict(?: \d+)?)\)"# + ext,
             acceptMarker: { _ in true }),
        Rule(tool: .iCloudDrive,
             pattern: #"(?<stem>.+?) (?<marker>[2-9]|[1-9]\d{1,3})"# + ext,
             acceptMarker: { _ in true }),
        Rule(tool: .oneDrive,
             pattern: #"(?<stem>.+?)-(?<marker>[A-Z0-9][A-Z0-9-]{0,14})"# + ext,
             acceptMarker: { marker in
                 marker.contains(where: { $0.isASCII && $0.isUppercase }) && !marker.hasSuffix("-")
             }),
    ]
}
