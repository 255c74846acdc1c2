#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CArchive
import ImprintFiles

/// The portable single-file form of a bundle, through libarchive.
///
/// Writing produces a POSIX pax tar compressed with zstd (`.tar.zst`); entry paths are
/// relative to the bundle root (`metadata.json`, `changes/a.log`, …), regular files and
/// directories only, without `locks/` and temporaries. Reading accepts tar (any compression
/// libarchive knows) and zip, and refuses hostile archives with a typed error, leaving
/// nothing behind: entries are extracted into a temporary directory next to the
/// destination, which is renamed into place only after the whole archive passed.
public enum BundleArchive {
    // File-type bits (archive_entry.h's AE_IF* macros do not import into Swift).
    static let typeMask: UInt32 = 0o170000
    static let typeRegular: UInt32 = 0o100000
    static let typeDirectory: UInt32 = 0o040000
    static let typeSymlink: UInt32 = 0o120000

    static let ioChunk = 1 << 16

    // MARK: Archive

    /// The kinds of archive file `archive` writes, chosen from the file name.
    public enum Format: String, Sendable, CaseIterable {
        /// POSIX pax tar compressed with zstd (`.tar.zst`, `.tzst`, `.imprintz`): the default.
        case tarZstd = "tar.zst"
        /// POSIX pax tar compressed with gzip (`.tar.gz`, `.tgz`).
        case tarGzip = "tar.gz"
        /// Uncompressed POSIX pax tar (`.tar`).
        case tar
        /// Zip, deflate-compressed (`.zip`).
        case zip

        /// The format a file name asks for, or nil when its extension names none of these.
        public init?(forPath path: String) {
            let name = POSIX.lastComponent(of: path).lowercased()
            if name.hasSuffix(".tar.zst") || name.hasSuffix(".tzst") || name.hasSuffix(".imprintz") {
                self = .tarZstd
            } else if name.hasSuffix(".tar.gz") || name.hasSuffix(".tgz") {
                self = .tarGzip
            } else if name.hasSuffix(".tar") {
                self = .tar
            } else if name.hasSuffix(".zip") {
                self = .zip
            } else {
                return nil
            }
        }
    }

    /// Writes the bundle at `bundlePath` to a new archive file at `archivePath` (replaced
    /// atomically if it exists), in `format`, or the format the file name asks for
    /// (`Format(forPath:)`); a name that asks for none is refused (`.invalidArgument`) rather
    /// than given contents its extension does not promise. Returns the number of files
    /// archived.
    @discardableResult
    public static func archive(bundleAt bundlePath: String, to archivePath: String, format: Format? = nil) throws -> Int {
        let layout = BundleLayout(root: bundlePath)
        guard POSIX.isRegularFile(layout.metadataPath) else {
            throw BundleError(.notFound, "not an Imprint bundle: no metadata.json", path: bundlePath)
        }
        guard let format = format ?? Format(forPath: archivePath) else {
            throw BundleError(.invalidArgument, "cannot tell the archive format from the name: use .tar.zst, .tar.gz, .tar or .zip", path: archivePath)
        }
        var files = 0
        try AtomicFile.write(to: archivePath) { fd, temporary in
            guard let a = archive_write_new() else { throw BundleError(.archiveLibrary, "archive_write_new failed") }
            defer { archive_write_free(a) }
            switch format {
            case .tarZstd:
                try check(a, archive_write_set_format_pax_restricted(a), temporary)
                try check(a, archive_write_add_filter_zstd(a), temporary)
            case .tarGzip:
                try check(a, archive_write_set_format_pax_restricted(a), temporary)
                try check(a, archive_write_add_filter_gzip(a), temporary)
            case .tar:
                try check(a, archive_write_set_format_pax_restricted(a), temporary)
            case .zip:
                try check(a, archive_write_set_format_zip(a), temporary)
            }
            try check(a, archive_write_open_fd(a, fd), temporary)
            try addDirectory(a, root: layout.root, relative: [], files: &files)
            try check(a, archive_write_close(a), temporary)
        }
        return files
    }

    private static func addDirectory(_ a: OpaquePointer, root: String, relative: [String], files: inout Int) throws {
        let directory = ([root] + relative).joined(separator: "/")
        for name in try POSIX.listDirectory(directory) {
            if relative.isEmpty, name == BundleLayout.locksDirectory { continue }
            if AtomicFile.isTemporaryName(name) { continue }
            let components = relative + [name]
            let full = root + "/" + components.joined(separator: "/")
            guard let mode = POSIX.lstatMode(full) else { continue }
            let type = UInt32(mode) & typeMask
            if type == typeDirectory {
                try writeHeader(a, path: components.joined(separator: "/"), type: typeDirectory, size: 0)
                try addDirectory(a, root: root, relative: components, files: &files)
            } else if type == typeRegular {
                try addFile(a, full: full, entryPath: components.joined(separator: "/"))
                files += 1
            }
            // Anything else (symlinks, sockets) is not bundle content and is left out.
        }
    }

    private static func writeHeader(_ a: OpaquePointer, path: String, type: UInt32, size: Int64) throws {
        guard let entry = archive_entry_new() else { throw BundleError(.archiveLibrary, "archive_entry_new failed") }
        defer { archive_entry_free(entry) }
        archive_entry_set_pathname_utf8(entry, path)
        archive_entry_set_filetype(entry, type)
        archive_entry_set_perm(entry, type == typeDirectory ? 0o755 : 0o644)
        archive_entry_set_size(entry, type == typeDirectory ? 0 : size)
        archive_entry_set_mtime(entry, 0, 0)
        try check(a, archive_write_header(a, entry), path)
    }

    private static func addFile(_ a: OpaquePointer, full: String, entryPath: String) throws {
        let fd = try POSIX.open(full, O_RDONLY | O_NOFOLLOW)
        defer { POSIX.close(fd) }
        let size = try POSIX.fileSize(fd, path: full)
        try writeHeader(a, path: entryPath, type: typeRegular, size: size)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ioChunk, alignment: 16)
        defer { buffer.deallocate() }
        var remaining = size
        while remaining > 0 {
            let n = try POSIX.read(fd, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(min(Int64(ioChunk), remaining))]), path: full)
            if n == 0 { break } // file shrank while archiving; libarchive pads the entry
            let written = archive_write_data(a, buffer.baseAddress, n)
            if written < 0 { throw libraryError(a, full) }
            remaining -= Int64(n)
        }
    }

    // MARK: Unarchive

    /// What `unarchive` extracted.
    public struct Extraction: Sendable, Equatable {
        public var files: Int
        public var directories: Int
        public var bytes: Int64
    }

    /// Extracts the archive at `archivePath` into a new bundle directory `destination`
    /// (which must not exist). Hostile or over-limit archives throw and leave nothing.
    @discardableResult
    public static func unarchive(_ archivePath: String, to destination: String,
                                 limits: ArchiveLimits = .default) throws -> Extraction {
        let destination = BundleLayout(root: destination).root
        if POSIX.isDirectory(archivePath) {
            throw BundleError(.invalidArgument, "is a directory, not an archive file (a bundle folder needs no unarchiving: open or merge it directly)", path: archivePath)
        }
        guard POSIX.exists(archivePath) else {
            throw BundleError(.notFound, "no such archive file", path: archivePath)
        }
        guard !POSIX.exists(destination) else {
            throw BundleError(.alreadyExists, "destination already exists", path: destination)
        }
        let parent = POSIX.parentDirectory(of: destination)
        // Remember the topmost directory this call creates, so a refusal can remove it too.
        var createdAncestor: String?
        var probe = parent
        while !probe.isEmpty, probe != "/", probe != ".", !POSIX.exists(probe) {
            createdAncestor = probe
            probe = POSIX.parentDirectory(of: probe)
        }
        try POSIX.makeDirectories(parent)
        removeAbandonedStaging(for: destination)
        let staging = AtomicFile.temporaryPath(for: destination)
        do {
            try POSIX.makeDirectory(staging, mode: 0o700)
            let result = try extract(archivePath, into: staging, limits: limits)
            guard POSIX.isRegularFile(staging + "/" + BundleLayout.metadataName) else {
                throw BundleError(.corrupt, "archive holds no bundle (no metadata.json at its root)", path: archivePath)
            }
            _ = chmod(staging, 0o755)
            try POSIX.fsyncDirectory(staging)
            guard !POSIX.exists(destination) else {
                throw BundleError(.alreadyExists, "destination appeared while extracting", path: destination)
            }
            try AtomicFile.commit(temporary: staging, to: destination)
            return result
        } catch {
            try? POSIX.removeTree(staging)
            if let createdAncestor { try? POSIX.removeTree(createdAncestor) }
            throw error
        }
    }

    /// Removes staging folders of earlier unarchives into `destination` whose process is gone
    /// (killed or crashed mid-way): `.NAME.tmp-PID-RANDOM` beside it, PID not running.
    static func removeAbandonedStaging(for destination: String) {
        let parent = POSIX.parentDirectory(of: destination)
        let prefix = "." + POSIX.lastComponent(of: destination) + ".tmp-"
        guard let names = try? POSIX.listDirectory(parent) else { return }
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let pid = Int32(rest.prefix { $0 != "-" }), pid > 0, pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH, POSIX.isDirectory(parent + "/" + name) {
                try? POSIX.removeTree(parent + "/" + name)
            }
        }
    }

    private static func extract(_ archivePath: String, into staging: String, limits: ArchiveLimits) throws -> Extraction {
        guard let a = archive_read_new() else { throw BundleError(.archiveLibrary, "archive_read_new failed") }
        defer { archive_read_free(a) }
        archive_read_support_filter_all(a)
        archive_read_support_format_tar(a)
        archive_read_support_format_zip(a)
        let archiveFD = try POSIX.open(archivePath, O_RDONLY)
        defer { POSIX.close(archiveFD) }
        try check(a, archive_read_open_fd(a, archiveFD, ioChunk), archivePath)
        // The expansion bound for this archive: by total and by ratio to its size.
        var limits = limits
        limits.maxTotalBytes = limits.maxContentBytes(forArchiveOf: try POSIX.fileSize(archiveFD, path: archivePath))

        var result = Extraction(files: 0, directories: 0, bytes: 0)
        var entries = 0
        var createdDirectories: Set<String> = []
        var extractedFiles: Set<String> = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ioChunk, alignment: 16)
        defer { buffer.deallocate() }

        while true {
            var entryPointer: OpaquePointer?
            let status = archive_read_next_header(a, &entryPointer)
            if status == ARCHIVE_EOF { break }
            guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry = entryPointer else {
                throw libraryError(a, archivePath)
            }
            entries += 1
            guard entries <= limits.maxEntries else {
                throw BundleError(.archiveLimitExceeded, "more than \(limits.maxEntries) entries", path: archivePath)
            }
            guard let rawPointer = archive_entry_pathname_utf8(entry) ?? archive_entry_pathname(entry) else {
                throw BundleError(.archivePathEscape, "entry without a readable path", path: archivePath)
            }
            let raw = String(cString: rawPointer)
            let type = UInt32(archive_entry_filetype(entry)) & typeMask
            let isPlainDirectory = type == typeDirectory && archive_entry_hardlink(entry) == nil
            let parts = try ArchiveEntryPath.components(of: raw, limits: limits, allowRoot: isPlainDirectory)
            if parts.isEmpty { continue } // "./": the root directory itself
            let relative = parts.joined(separator: "/")
            let target = staging + "/" + relative

            if let hardlinkPointer = archive_entry_hardlink(entry) {
                let linkRaw = String(cString: hardlinkPointer)
                let linkParts: [String]
                do {
                    linkParts = try ArchiveEntryPath.components(of: linkRaw, limits: limits)
                } catch {
                    throw BundleError(.archivePathEscape, "hard link \"\(raw.prefix(200))\" points outside the bundle (\"\(linkRaw.prefix(200))\")", path: archivePath)
                }
                let linkRelative = linkParts.joined(separator: "/")
                guard !extractedFiles.contains(relative) else {
                    throw BundleError(.corrupt, "entry \"\(raw.prefix(200))\" appears twice", path: archivePath)
                }
                guard extractedFiles.contains(linkRelative) else {
                    throw BundleError(.archivePathEscape, "hard link \"\(raw.prefix(200))\" points to \"\(linkRaw.prefix(200))\", not a file extracted before it", path: archivePath)
                }
                try makeParents(parts, staging: staging, created: &createdDirectories, limits: limits)
                // Copy rather than link: the bundle never shares inodes.
                try copyFile(from: staging + "/" + linkRelative, to: target)
                extractedFiles.insert(relative)
                result.files += 1
                continue
            }

            switch type {
            case typeDirectory:
                try makeParents(parts + ["_"], staging: staging, created: &createdDirectories, limits: limits)
                result.directories += 1
            case typeRegular:
                try makeParents(parts, staging: staging, created: &createdDirectories, limits: limits)
                if extractedFiles.contains(relative) {
                    // Two entries for one name (metadata.json twice): which is the bundle's?
                    throw BundleError(.corrupt, "entry \"\(raw.prefix(200))\" appears twice", path: archivePath)
                }
                if createdDirectories.contains(relative) {
                    throw BundleError(.corrupt, "entry \"\(raw.prefix(200))\" is both a directory and a file", path: archivePath)
                }
                if archive_entry_size_is_set(entry) != 0, archive_entry_size(entry) > limits.maxTotalBytes - result.bytes {
                    throw BundleError(.archiveLimitExceeded, "expands beyond \(limits.maxTotalBytes) bytes", path: archivePath)
                }
                let fd = try POSIX.open(target, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: 0o644)
                do {
                    while true {
                        let n = archive_read_data(a, buffer.baseAddress, buffer.count)
                        if n == 0 { break }
                        if n < 0 { throw libraryError(a, archivePath) }
                        result.bytes += Int64(n)
                        guard result.bytes <= limits.maxTotalBytes else {
                            throw BundleError(.archiveLimitExceeded, "expands beyond \(limits.maxTotalBytes) bytes", path: archivePath)
                        }
                        try POSIX.writeAll(fd, UnsafeRawBufferPointer(rebasing: buffer[0..<n]), path: target)
                    }
                    try POSIX.fsync(fd, path: target)
                } catch {
                    POSIX.close(fd)
                    throw error
                }
                POSIX.close(fd)
                extractedFiles.insert(relative)
                result.files += 1
            case typeSymlink:
                let linkTarget = archive_entry_symlink(entry).map { String(cString: $0) } ?? ""
                if ArchiveEntryPath.linkTargetEscapes(entry: parts, target: linkTarget) {
                    throw BundleError(.archivePathEscape, "symlink \"\(raw.prefix(200))\" points outside the bundle (\"\(linkTarget.prefix(200))\")", path: archivePath)
                }
                throw BundleError(.archiveForbiddenEntryType, "symlink \"\(raw.prefix(200))\": bundles contain no symlinks", path: archivePath)
            default:
                throw BundleError(.archiveForbiddenEntryType, "entry \"\(raw.prefix(200))\" is a \(typeName(type)), bundles hold only files and directories", path: archivePath)
            }
        }
        for directory in createdDirectories.sorted(by: { $0.count > $1.count }) {
            try POSIX.fsyncDirectory(staging + "/" + directory)
        }
        return result
    }

    /// Creates the directories above the last component of `parts`, refusing to pass through
    /// anything that is not a directory we created.
    private static func makeParents(_ parts: [String], staging: String, created: inout Set<String>, limits: ArchiveLimits) throws {
        var path: [String] = []
        for part in parts.dropLast() {
            path.append(part)
            let relative = path.joined(separator: "/")
            if created.contains(relative) { continue }
            let full = staging + "/" + relative
            if POSIX.exists(full) {
                throw BundleError(.corrupt, "entry path \"\(relative)\" is both a file and a directory")
            }
            try POSIX.makeDirectory(full)
            created.insert(relative)
        }
    }

    private static func copyFile(from source: String, to destination: String) throws {
        let input = try POSIX.open(source, O_RDONLY | O_NOFOLLOW)
        defer { POSIX.close(input) }
        let output = try POSIX.open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: 0o644)
        defer { POSIX.close(output) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ioChunk, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try POSIX.read(input, buffer, path: source)
            if n == 0 { break }
            try POSIX.writeAll(output, UnsafeRawBufferPointer(rebasing: buffer[0..<n]), path: destination)
        }
        try POSIX.fsync(output, path: destination)
    }

    static func typeName(_ type: UInt32) -> String {
        switch type {
        case 0o020000: return "character device"
        case 0o060000: return "block device"
        case 0o010000: return "fifo"
        case 0o140000: return "socket"
        default: return "file of type 0o\(String(type, radix: 8))"
        }
    }

    // MARK: libarchive errors

    static func check(_ a: OpaquePointer, _ status: Int32, _ path: String) throws {
        if status == ARCHIVE_OK || status == ARCHIVE_WARN { return }
        throw libraryError(a, path)
    }

    static func libraryError(_ a: OpaquePointer, _ path: String) -> BundleError {
        let message = archive_error_string(a).map { String(cString: $0) } ?? "unknown libarchive error"
        return BundleError(.archiveLibrary, message, path: path)
    }
}
