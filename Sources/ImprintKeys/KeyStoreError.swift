/// The one error type thrown by ImprintKeys.
///
/// Compare with the static members (`error == .wrongPassphrase`); new kinds may be added
/// without breaking callers. `message` is a one-line explanation, `path` the file involved.
public struct KeyStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    enum Code: String, Sendable, Hashable {
        case wrongPassphrase
        case keyFileExposed
        case corrupt
        case unsupportedVersion
        case io
        case invalidArgument
        case unknownIdentity
    }

    let code: Code
    /// A one-line human explanation.
    public let message: String
    /// The file involved, when there is one.
    public let path: String?

    init(_ code: Code, _ message: String, path: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
    }

    /// The passphrase (or key file) does not unlock the store's master key. Nothing was changed.
    public static let wrongPassphrase = KeyStoreError(.wrongPassphrase, "")
    /// The key file is readable or writable by other users (its mode is not 0600).
    public static let keyFileExposed = KeyStoreError(.keyFileExposed, "")
    /// Stored bytes fail authentication or do not have the expected shape.
    public static let corrupt = KeyStoreError(.corrupt, "")
    /// The store was written by a newer schema than this build knows.
    public static let unsupportedVersion = KeyStoreError(.unsupportedVersion, "")
    /// The database or a file could not be read or written.
    public static let io = KeyStoreError(.io, "")
    /// An argument that makes no sense (empty convo id, wrong key length).
    public static let invalidArgument = KeyStoreError(.invalidArgument, "")
    /// The identity named is not in this store.
    public static let unknownIdentity = KeyStoreError(.unknownIdentity, "")

    /// Errors of the same kind are equal, whatever their message or path.
    public static func == (lhs: KeyStoreError, rhs: KeyStoreError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String {
        var text = code.rawValue
        if !message.isEmpty { text += ": \(message)" }
        if let path { text += " (\(path))" }
        return text
    }
}
