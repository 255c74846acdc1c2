#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one error type thrown by ImprintBundle.
///
/// `code` is stable and machine-readable (the CLI maps it to exit codes: `isHostileOrCorrupt`
/// means exit 2); `message` is a one-line human explanation; `path` names the file involved.
public struct BundleError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// A system call failed (`errno` is set).
        case io
        /// A file or directory that must exist does not.
        case notFound
        /// The file is not what it claims to be (bad magic, bad header, bad JSON).
        case corrupt
        /// Written by a newer format version than this build understands.
        case unsupportedVersion
        /// A record or frame larger than the configured maximum.
        case tooLarge
        /// A device id that cannot be used as a file name component.
        case invalidDeviceID
        /// An asset id that is not 64 lowercase hex digits.
        case invalidAssetID
        /// A lock could not be taken within the allowed time.
        case lockTimeout
        /// An archive entry tries to escape the destination (`..`, absolute path, link out).
        case archivePathEscape
        /// An archive entry of a type bundles never contain (device, fifo, socket).
        case archiveForbiddenEntryType
        /// An archive that expands beyond the size or entry-count limit.
        case archiveLimitExceeded
        /// libarchive reported an error.
        case archiveLibrary
        /// The destination of an operation already exists.
        case alreadyExists
        /// An argument that makes no sense (empty, out of range).
        case invalidArgument
        /// The bundle has not fully arrived: metadata.json is missing or not downloaded yet
        /// while a sync tool is still copying the bundle. Retry when more files arrive.
        case incomplete
    }

    public var code: Code
    public var message: String
    public var path: String?
    /// `errno` for `.io` errors, when known.
    public var errno: Int32?

    public init(_ code: Code, _ message: String, path: String? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.errno = errno
    }

    /// True for errors caused by the data rather than by the environment or the caller:
    /// corrupt files, hostile archives, too-new formats.
    public var isHostileOrCorrupt: Bool {
        switch code {
        case .corrupt, .unsupportedVersion, .tooLarge, .archivePathEscape,
             .archiveForbiddenEntryType, .archiveLimitExceeded, .archiveLibrary:
            return true
        default:
            return false
        }
    }

    /// True for an I/O error saying the file is not there (any more): another process
    /// removed it between a directory listing and the read.
    public var isVanished: Bool {
        (code == .io || code == .notFound) && self.errno == ENOENT
    }

    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let path { text += " (\(path))" }
        return text
    }
}
