import Foundation

/// Recognises the temporary, placeholder and bookkeeping files that file-sync tools put next
/// to the files they sync, so that a bundle neither reads them as data nor mistakes them for
/// damage, and knows when a file is still on its way.
///
/// | tool | name | meaning |
/// |---|---|---|
/// | Syncthing | `.syncthing.NAME.tmp`, `~syncthing~NAME.tmp` | NAME is being downloaded |
/// | Nextcloud / ownCloud | `.NAME.~HEX` | NAME is being downloaded |
/// | OneDrive (Linux client), rclone | `NAME.partial`, `NAME.HEX.partial` | NAME is being downloaded |
/// | Dropbox | `.dropbox`, `.dropbox.attr`, `.dropbox.cache/` | the tool's own bookkeeping |
/// | iCloud Drive | `.NAME.icloud` | NAME exists but is not downloaded to this machine |
///
/// Conflict copies are a different thing (the tool finished, but two machines disagreed):
/// see ``ConflictCopyName``.
public enum SyncToolFileName: Sendable, Equatable {
    /// A download in progress that will become `finalName` (nil when the name does not say).
    case downloading(finalName: String?)
    /// An iCloud Drive placeholder: `finalName` exists in the cloud but not on this disk.
    case placeholder(finalName: String)
    /// A sync tool's own file, never data.
    case bookkeeping

    /// What `name` (one path component) is, or nil when it is none of these.
    public static func classify(_ name: String) -> SyncToolFileName? {
        if name == ".dropbox" || name == ".dropbox.attr" || name == ".dropbox.cache" { return .bookkeeping }
        if name.hasPrefix(".syncthing."), name.hasSuffix(".tmp"), name.count > ".syncthing.".count + ".tmp".count {
            return .downloading(finalName: String(name.dropFirst(".syncthing.".count).dropLast(".tmp".count)))
        }
        if name.hasPrefix("~syncthing~"), name.hasSuffix(".tmp"), name.count > "~syncthing~".count + ".tmp".count {
            return .downloading(finalName: String(name.dropFirst("~syncthing~".count).dropLast(".tmp".count)))
        }
        if name.hasPrefix("."), name.hasSuffix(".icloud"), name.count > 1 + ".icloud".count {
            return .placeholder(finalName: String(name.dropFirst().dropLast(".icloud".count)))
        }
        if name.hasPrefix("."), let marker = name.range(of: ".~", options: .backwards),
           marker.lowerBound > name.index(after: name.startIndex) {
            let suffix = name[marker.upperBound...]
            if !suffix.isEmpty, suffix.allSatisfy(\.isHexDigit) {
                return .downloading(finalName: String(name[name.index(after: name.startIndex)..<marker.lowerBound]))
            }
        }
        if name.hasSuffix(".partial"), name.count > ".partial".count {
            var stem = Substring(name.dropLast(".partial".count))
            // rclone: NAME.<hex>.partial
            if let dot = stem.lastIndex(of: "."), stem[stem.index(after: dot)...].count >= 6,
               stem[stem.index(after: dot)...].allSatisfy(\.isHexDigit) {
                stem = stem[..<dot]
            }
            return .downloading(finalName: String(stem))
        }
        return nil
    }
}
