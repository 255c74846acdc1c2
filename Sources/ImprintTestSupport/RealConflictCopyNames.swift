/// Conflict-copy names as sync tools really write them, taken from each tool's documentation
/// and from copies seen in the wild, each with the file it is a copy of. Kept apart from
/// `ConflictCopyName` (the parser): the parser's tests read these, and the simulated copier
/// (`SimulatedCloud`) names its copies after them, so neither can only produce what the
/// parser already accepts.
///
/// Sources: Syncthing's docs (FAQ "What if there is a conflict?":
/// `<name>.sync-conflict-<date>-<time>-<modifiedBy>.<ext>`); Nextcloud / ownCloud desktop
/// client docs ("Conflicts": `<name> (conflicted copy <date> <time>).<ext>`, older clients
/// `<name>_conflict-<date>-<time>.<ext>`); Dropbox help ("conflicted copy", "Case
/// Conflict", "Unicode Encoding Conflict"); iCloud Drive (a numbered duplicate, `<name> 2`);
/// OneDrive (the computer's name appended).
public enum RealConflictCopyNames {
    public struct Example: Sendable, Hashable {
        /// `ConflictCopyName.Tool`'s raw value.
        public var tool: String
        public var copy: String
        public var original: String

        /// The copy's decoration: what the tool put between the original's stem and its
        /// extension (`" (conflicted copy 2018-04-10 093612)"`).
        public var decoration: String {
            let (stem, ext) = Self.split(original)
            return String(copy.dropFirst(stem.count).dropLast(ext.count))
        }

        /// The name this tool would give a copy of `name`, decorated as this example is.
        public func copy(of name: String) -> String {
            let (stem, ext) = Self.split(name)
            return stem + decoration + ext
        }

        /// The `k`-th other copy of `name` in this example's style, for a file that conflicts
        /// again while earlier copies are still there: the decoration's last number moves on
        /// by `k` (a later time, date, duplicate number or machine number, as the tool would
        /// write), or nil when the decoration holds no number (`" (conflicted copy)"`).
        public func copy(of name: String, variant k: Int) -> String? {
            guard k > 0 else { return copy(of: name) }
            var characters = Array(decoration)
            guard let last = characters.lastIndex(where: \.isNumber) else { return nil }
            var first = last
            while first > 0, characters[first - 1].isNumber { first -= 1 }
            guard let value = Int(String(characters[first...last])) else { return nil }
            let digits = Array(String(value + k))
            let width = last - first + 1
            let padded = digits.count >= width ? digits : Array(repeating: "0", count: width - digits.count) + digits
            characters.replaceSubrange(first...last, with: padded)
            let (stem, ext) = Self.split(name)
            return stem + String(characters) + ext
        }

        /// A name's stem and extension (with its dot; empty when there is none).
        static func split(_ name: String) -> (String, String) {
            guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
            return (String(name[..<dot]), String(name[dot...]))
        }
    }

    public static let examples: [Example] = [
        Example(tool: "syncthing", copy: "laptop.sync-conflict-20260413-091523-K3X2R2T.log", original: "laptop.log"),
        Example(tool: "syncthing", copy: "metadata.sync-conflict-20250101-000000-ABCDEFG.json", original: "metadata.json"),
        Example(tool: "syncthing", copy: "paper.sync-conflict-20260818-173636-D4LGQYW.imprint", original: "paper.imprint"),
        Example(tool: "syncthing", copy: "notes.sync-conflict-20150811-101010.txt", original: "notes.txt"),
        Example(tool: "syncthing", copy: "Makefile.sync-conflict-20240229-235959-ZZZZZZZ", original: "Makefile"),
        Example(tool: "syncthing", copy: "a.b.sync-conflict-20240229-235959-ZZZZZZZ.gz", original: "a.b.gz"),
        Example(tool: "nextcloud", copy: "mydata (conflicted copy 2018-04-10 093612).txt", original: "mydata.txt"),
        Example(tool: "nextcloud", copy: "laptop (conflicted copy 2025-04-10 093612).log", original: "laptop.log"),
        Example(tool: "nextcloud", copy: "paper (conflicted copy alice 2025-04-10 093612).imprint", original: "paper.imprint"),
        Example(tool: "nextcloudLegacy", copy: "laptop_conflict-20160101-153110.log", original: "laptop.log"),
        Example(tool: "nextcloudLegacy", copy: "report_conflict-20160101-153110", original: "report"),
        Example(tool: "dropbox", copy: "laptop (conflicted copy).log", original: "laptop.log"),
        Example(tool: "dropbox", copy: "laptop (Ana's conflicted copy 2019-06-10).log", original: "laptop.log"),
        Example(tool: "dropbox", copy: "metadata (John Smith’s conflicted copy 2021-12-31).json", original: "metadata.json"),
        Example(tool: "dropbox", copy: "paper (MacBook Pro's conflicted copy 2024-02-02 (1)).imprint", original: "paper.imprint"),
        Example(tool: "dropbox", copy: "Paper (Case Conflict).imprint", original: "Paper.imprint"),
        Example(tool: "dropbox", copy: "café (Unicode Encoding Conflict).txt", original: "café.txt"),
        Example(tool: "iCloudDrive", copy: "paper 2.imprint", original: "paper.imprint"),
        Example(tool: "iCloudDrive", copy: "laptop 2.log", original: "laptop.log"),
        Example(tool: "iCloudDrive", copy: "metadata 3.json", original: "metadata.json"),
        Example(tool: "iCloudDrive", copy: "my paper 12.imprint", original: "my paper.imprint"),
        Example(tool: "oneDrive", copy: "laptop-DESKTOP-4PIIBJ1.log", original: "laptop.log"),
        Example(tool: "oneDrive", copy: "paper-LAPTOP7.imprint", original: "paper.imprint"),
        Example(tool: "oneDrive", copy: "metadata-WORKPC.json", original: "metadata.json"),
    ]

    /// The examples of one tool.
    public static func of(_ tool: String) -> [Example] { examples.filter { $0.tool == tool } }
}
