#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ImprintFiles

/// The 0600 file that holds a store's unlock key when there is no passphrase.
///
/// 32 random bytes, created atomically and exclusively (temp + fsync + link) with mode 0600
/// on first use.
/// Opening refuses a file that other users can read or write (`.keyFileExposed`) or that is
/// not exactly 32 bytes (`.corrupt`). The file protects the store against other local users
/// only: whoever can read the disk reads this file too.
enum KeyFile {
    static let byteCount = 32

    /// The key in `path`, creating the file if it does not exist.
    static func loadOrCreate(at path: String) throws(KeyStoreError) -> [UInt8] {
        if !POSIX.exists(path) {
            var rng = SystemRandomNumberGenerator()
            let bytes = (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
            do {
                try POSIX.makeDirectories(POSIX.parentDirectory(of: path))
                // Exclusive: a process that loses a creation race reads the winner's key.
                try AtomicFile.createExclusively(bytes, at: path, mode: 0o600)
            } catch {
                throw KeyStoreError(.io, "cannot create the key file: \(error)", path: path)
            }
        }
        guard let mode = POSIX.lstatMode(path), mode & S_IFMT == S_IFREG else {
            throw KeyStoreError(.corrupt, "the key file is not a regular file", path: path)
        }
        guard mode & 0o077 == 0 else {
            throw KeyStoreError(.keyFileExposed, "the key file is readable or writable by other users (chmod 600 it)", path: path)
        }
        let bytes: [UInt8]
        do {
            bytes = try AtomicFile.read(path, limit: 1024)
        } catch {
            throw KeyStoreError(.io, "cannot read the key file: \(error)", path: path)
        }
        guard bytes.count == byteCount else {
            throw KeyStoreError(.corrupt, "the key file holds \(bytes.count) bytes, not \(byteCount)", path: path)
        }
        return bytes
    }
}
