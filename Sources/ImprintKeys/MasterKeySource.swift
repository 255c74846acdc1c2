/// Where the key that unlocks a store's master key comes from.
///
/// - `passphrase`: scrypt over the passphrase and a random salt stored in the store. Protects
///   the secrets against anyone who gets the files (a stolen disk, a backup) but not the
///   passphrase.
/// - `keyFile`: 32 random bytes in a file of mode 0600 beside the store, created on first
///   use. Protects against other users of the same machine (the file permissions do), **not**
///   against a thief of the disk, who gets the key file with the store.
public enum MasterKeySource: Sendable {
    /// A passphrase; `parameters` are used only when the store is created.
    case passphrase(String, parameters: ScryptParameters = .owasp)
    /// A 0600 key file at `path`; created (with fresh random bytes) if missing.
    case keyFile(path: String)
}
