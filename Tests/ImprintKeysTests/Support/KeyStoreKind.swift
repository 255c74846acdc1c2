import Foundation
import ImprintEd25519
import ImprintKeys
import ImprintTestSupport
import Testing

/// The key-store backends the conformance suite runs against. A new backend (the planned
/// Keychain store) adds a case here and runs every conformance test unchanged.
enum KeyStoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// SQLite unlocked by a passphrase (scrypt with test parameters).
    case sqlitePassphrase
    /// SQLite unlocked by a 0600 key file.
    case sqliteKeyFile
    /// The in-memory store for upper layers' tests.
    case inMemory

    var testDescription: String { rawValue }

    /// The backends that keep files, for the on-disk tests (forward secrecy, crashes).
    static let onDisk: [KeyStoreKind] = [.sqlitePassphrase, .sqliteKeyFile]

    /// A new, empty store of this kind, in `directory` when it keeps files.
    func makeStore(in directory: TemporaryDirectory) throws -> any KeyStore {
        switch self {
        case .sqlitePassphrase:
            return try SQLiteKeyStore(path: directory.file("keys.sqlite"),
                                      unlock: .passphrase("correct horse battery staple", parameters: .testing))
        case .sqliteKeyFile:
            return try SQLiteKeyStore(path: directory.file("keys.sqlite"), unlock: .keyFile(path: directory.file("keys.key")))
        case .inMemory:
            return InMemoryKeyStore()
        }
    }

    /// A new store of this kind and its device identity's did.
    func makeStoreWithIdentity(in directory: TemporaryDirectory) throws -> (any KeyStore, DIDKey) {
        let store = try makeStore(in: directory)
        return (store, try store.deviceIdentity().did)
    }

    /// The same store opened again (a restart); the in-memory store is simply returned.
    func reopen(_ store: any KeyStore, in directory: TemporaryDirectory) throws -> any KeyStore {
        switch self {
        case .inMemory: return store
        default: return try makeStore(in: directory)
        }
    }
}

/// `count` bytes from `rng`.
func randomBytes(_ count: Int, _ rng: inout SplitMix64) -> [UInt8] {
    (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
}
