/// The one error type thrown by ImprintFiles: a failed system call, a missing file, a file
/// over a size limit, a lock not taken in time.
///
/// Compare with the static members (`error == .notFound`); `errno` and `path` say more.
/// ImprintBundle reports these as `BundleError`s of the same kind (`BundleError(_: FileError)`).
public struct FileError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        case io, notFound, tooLarge, lockTimeout, wrongType
    }

    package let code: Code
    /// A one-line human explanation.
    public let message: String
    /// The file involved.
    public let path: String?
    /// `errno` of the failed call, when there was one.
    public let errno: Int32?

    package init(_ code: Code, _ message: String, path: String? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.errno = errno
    }

    /// A system call failed (`errno` is set).
    public static let io = FileError(.io, "")
    /// A file or directory that must exist does not.
    public static let notFound = FileError(.notFound, "")
    /// A file larger than the caller's limit.
    public static let tooLarge = FileError(.tooLarge, "")
    /// A lock still held by another writer when the timeout ran out.
    public static let lockTimeout = FileError(.lockTimeout, "")
    /// A directory, FIFO, device or link where a regular file belongs.
    public static let wrongType = FileError(.wrongType, "")

    /// Errors of the same kind are equal, whatever their message, path or errno.
    public static func == (lhs: FileError, rhs: FileError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let path { text += " (\(path))" }
        return text
    }
}
