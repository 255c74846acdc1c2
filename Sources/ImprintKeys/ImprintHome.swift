import Foundation

/// The directory a device keeps its identity and keys in: `$IMPRINT_HOME`, by default
/// `~/.imprint` (the CLI's `--home D` overrides). One key store per home, so one device
/// identity per home: `openKeyStore(passphrase:).deviceIdentity()` is the same every time.
///
/// ```swift
/// let store = try ImprintHome.current().openKeyStore(passphrase: nil) // keys.sqlite + keys.key
/// let did = try store.deviceIdentity().did
/// ```
public struct ImprintHome: Hashable, Sendable {
    /// The home directory.
    public let path: String

    public init(path: String) { self.path = path }

    /// `$IMPRINT_HOME` if set and not empty, else `$HOME/.imprint`.
    public static func current(environment: [String: String] = ProcessInfo.processInfo.environment) -> ImprintHome {
        if let home = environment["IMPRINT_HOME"], !home.isEmpty { return ImprintHome(path: home) }
        let user = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return ImprintHome(path: user + "/.imprint")
    }

    /// The key store's database file.
    public var keyStorePath: String { path + "/keys.sqlite" }
    /// The key file that unlocks the store when there is no passphrase (mode 0600).
    public var keyFilePath: String { path + "/keys.key" }

    /// Opens (or creates) the home's key store: locked by `passphrase` when given (scrypt
    /// with `parameters`, used only when the store is created), else by the key file.
    public func openKeyStore(passphrase: String?, parameters: ScryptParameters = .owasp) throws(KeyStoreError) -> SQLiteKeyStore {
        try SQLiteKeyStore(path: keyStorePath,
                           unlock: passphrase.map { .passphrase($0, parameters: parameters) } ?? .keyFile(path: keyFilePath))
    }
}
