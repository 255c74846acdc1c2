/// Validation of one archive entry's path: the part of unarchiving that decides whether
/// an entry stays inside the destination.
enum ArchiveEntryPath {
    /// Normalises `raw` to components below the root, or throws `.archivePathEscape`.
    /// Refuses absolute paths, drive letters, backslashes, `..` anywhere, empty names and
    /// paths above the length or depth limit. `.` components and a leading `./` are dropped.
    static func components(of raw: String, limits: ArchiveLimits) throws -> [String] {
        try components(of: raw, limits: limits, allowRoot: false)
    }

    /// Same, but with `allowRoot` a path naming the root itself (`.`, `./`) gives `[]`: the
    /// directory entry `tar -C bundle -cf x .` writes first.
    static func components(of raw: String, limits: ArchiveLimits, allowRoot: Bool) throws -> [String] {
        func escape(_ why: String) -> BundleError {
            BundleError(.archivePathEscape, "entry \"\(raw.prefix(200))\": \(why)")
        }
        guard raw.utf8.count <= limits.maxPathLength else { throw escape("path longer than \(limits.maxPathLength) bytes") }
        guard !raw.hasPrefix("/") else { throw escape("absolute path") }
        guard !raw.contains("\\") else { throw escape("backslash in path") }
        // Control characters (a newline, a NUL smuggled into a pax or zip name, an escape
        // sequence) have no place in a bundle's file names and fool readers of listings.
        if let control = raw.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw escape("control character U+\(String(control.value, radix: 16, uppercase: true)) in name")
        }
        let utf8 = Array(raw.utf8)
        if utf8.count >= 2, utf8[1] == UInt8(ascii: ":"),
           (65...90).contains(utf8[0]) || (97...122).contains(utf8[0]) {
            throw escape("drive-letter path")
        }
        var parts: [String] = []
        for part in raw.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." { throw escape("'..' component") }
            guard part.utf8.count <= 255 else { throw escape("component longer than 255 bytes") }
            parts.append(String(part))
        }
        if parts.isEmpty, allowRoot, !raw.isEmpty { return [] }
        guard !parts.isEmpty else { throw escape("empty path") }
        guard parts.count <= limits.maxDepth else { throw escape("deeper than \(limits.maxDepth) levels") }
        return parts
    }

    /// Whether a symlink at `entry` (components) with `target` would point outside the root.
    static func linkTargetEscapes(entry: [String], target: String) -> Bool {
        if target.isEmpty || target.hasPrefix("/") || target.contains("\\") { return true }
        var stack = Array(entry.dropLast())
        for part in target.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." {
                if stack.isEmpty { return true }
                stack.removeLast()
            } else {
                stack.append(String(part))
            }
        }
        return false
    }
}
