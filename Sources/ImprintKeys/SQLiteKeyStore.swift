#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Crypto
import GRDB
import ImprintEd25519
import ImprintEncoding
import ImprintFiles

/// The file-backed `KeyStore`: one SQLite database (through GRDB), every secret sealed
/// (`SecretSealer`) under a random 256-bit master key, itself stored wrapped (AES-GCM) by
/// the key that `MasterKeySource` gives: scrypt of a passphrase, or a 0600 key file.
///
/// On-disk guarantees (docs/keys.md):
/// - `PRAGMA secure_delete = ON`: deleted or overwritten cells and freed pages are zeroed;
/// - `journal_mode = TRUNCATE`: the rollback journal, which holds pre-images of the pages a
///   transaction changes, is cut to zero bytes when the transaction commits, so after every
///   committed delete no byte of the database or journal holds the secret or its sealed
///   blob (no WAL to checkpoint, and no reader can hold old frames alive);
/// - `temp_store = MEMORY`, `synchronous = FULL`: no temporary files; a commit is durable
///   when the call returns, and a crash before that leaves the previous state (the journal
///   rolls back).
/// Files are created with mode 0600. Several processes may open the same store; writes take
/// an immediate transaction and wait up to 10 s for each other.
///
/// ```swift
/// let store = try SQLiteKeyStore(path: "keys.sqlite", unlock: .passphrase("correct horse"))
/// let me = try store.deviceIdentity()
/// try store.saveEpochSecret(secret, convo: "c1", epoch: 7, for: me.did)
/// try store.deleteEpochSecrets(convo: "c1", before: 8, for: me.did) // gone from the disk
/// ```
public final class SQLiteKeyStore: KeyStore {
    /// The database file.
    public let path: String
    private let queue: DatabaseQueue
    private let sealer: SecretSealer

    /// Opens the store at `path`, creating it (with a new master key locked by `unlock`) if
    /// there is none. A wrong passphrase or key file throws `.wrongPassphrase` and changes
    /// nothing on disk; a store from a newer build throws `.unsupportedVersion`.
    public init(path: String, unlock: MasterKeySource) throws(KeyStoreError) {
        self.path = path
        do {
            try POSIX.makeDirectories(POSIX.parentDirectory(of: path))
            if !POSIX.exists(path) {
                // Create the file 0600 before SQLite does (it would use 0644); the journal
                // inherits the database file's mode.
                let fd = try POSIX.open(path, O_RDWR | O_CREAT, mode: 0o600)
                POSIX.close(fd)
            }
        } catch {
            throw KeyStoreError(.io, "cannot create the store: \(error)", path: path)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA secure_delete = ON")
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = TRUNCATE")
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw KeyStoreError(.io, "cannot open the store: \(error)", path: path)
        }
        self.queue = queue
        let master = try Self.unlock(queue, with: unlock, path: path)
        self.sealer = SecretSealer(master: master)
    }

    // MARK: Unlocking

    private static let wrapContext = Array("imprint-keys/master/v1".utf8)

    /// Reads (or, for a new store, creates) the master key. Only a new store is written
    /// before the unlock succeeds.
    private static func unlock(_ queue: DatabaseQueue, with source: MasterKeySource, path: String) throws(KeyStoreError) -> SymmetricKey {
        struct StoredMaster { var source: String; var salt: [UInt8]?; var parameters: ScryptParameters?; var wrapped: [UInt8] }
        let stored: StoredMaster?
        do {
            stored = try queue.read { db -> StoredMaster? in
                guard try db.tableExists("master_key"),
                      let row = try Row.fetchOne(db, sql: "SELECT * FROM master_key WHERE id = 1") else { return nil }
                let n: Int? = row["scrypt_n"], r: Int? = row["scrypt_r"], p: Int? = row["scrypt_p"]
                return StoredMaster(source: row["source"], salt: (row["scrypt_salt"] as Data?).map { Array($0) },
                                    parameters: n.flatMap { n in r.flatMap { r in p.map { ScryptParameters(rounds: n, blockSize: r, parallelism: $0) } } },
                                    wrapped: Array(row["wrapped_key"] as Data))
            }
        } catch {
            throw KeyStoreError(.corrupt, "not a key store: \(error)", path: path)
        }

        if let stored {
            let kek: SymmetricKey
            switch source {
            case .passphrase(let passphrase, _):
                guard stored.source == "passphrase" else {
                    throw KeyStoreError(.wrongPassphrase, "this store is locked by a key file, not a passphrase", path: path)
                }
                guard let salt = stored.salt, let parameters = stored.parameters, parameters.isAcceptable else {
                    throw KeyStoreError(.corrupt, "the store's scrypt parameters are missing or out of range", path: path)
                }
                kek = try derive(passphrase, salt: salt, parameters: parameters)
            case .keyFile(let keyPath):
                guard stored.source == "keyFile" else {
                    throw KeyStoreError(.wrongPassphrase, "this store is locked by a passphrase, not a key file", path: path)
                }
                kek = SymmetricKey(data: try KeyFile.loadOrCreate(at: keyPath))
            }
            let master: [UInt8]
            do {
                master = Array(try AES.GCM.open(AES.GCM.SealedBox(combined: stored.wrapped), using: kek, authenticating: wrapContext))
            } catch {
                throw KeyStoreError(.wrongPassphrase, "the passphrase or key file does not unlock this store", path: path)
            }
            guard master.count == 32 else { throw KeyStoreError(.corrupt, "the master key has \(master.count) bytes", path: path) }
            try migrate(queue, path: path)
            return SymmetricKey(data: master)
        }

        // A new store: schema, then a fresh master key wrapped by the source's key.
        var rng = SystemRandomNumberGenerator()
        let master: [UInt8] = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
        var salt: [UInt8]?
        var parameters: ScryptParameters?
        let kek: SymmetricKey
        switch source {
        case .passphrase(let passphrase, let chosen):
            guard chosen.isAcceptable else { throw KeyStoreError(.invalidArgument, "scrypt parameters out of range") }
            let newSalt = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
            kek = try derive(passphrase, salt: newSalt, parameters: chosen)
            salt = newSalt
            parameters = chosen
        case .keyFile(let keyPath):
            kek = SymmetricKey(data: try KeyFile.loadOrCreate(at: keyPath))
        }
        let wrapped: [UInt8]
        do {
            wrapped = Array(try AES.GCM.seal(master, using: kek, authenticating: wrapContext).combined!)
        } catch {
            throw KeyStoreError(.io, "cannot wrap the master key: \(error)", path: path)
        }
        try migrate(queue, path: path)
        do {
            try queue.write { db in
                // OR IGNORE: another process may have created the store meanwhile; then its
                // master key stands and is unlocked below like any existing store's.
                try db.execute(sql: """
                    INSERT OR IGNORE INTO master_key (id, source, scrypt_salt, scrypt_n, scrypt_r, scrypt_p, wrapped_key)
                    VALUES (1, ?, ?, ?, ?, ?, ?)
                    """, arguments: [salt == nil ? "keyFile" : "passphrase", salt.map { Data($0) },
                                     parameters?.rounds, parameters?.blockSize, parameters?.parallelism, Data(wrapped)])
            }
        } catch {
            throw KeyStoreError(.io, "cannot create the store: \(error)", path: path)
        }
        return try unlock(queue, with: source, path: path)
    }

    private static func derive(_ passphrase: String, salt: [UInt8], parameters: ScryptParameters) throws(KeyStoreError) -> SymmetricKey {
        do {
            return try PassphraseKDF.derive(passphrase, salt: salt, parameters: parameters)
        } catch {
            throw KeyStoreError(.invalidArgument, "scrypt failed: \(error)")
        }
    }

    private static func migrate(_ queue: DatabaseQueue, path: String) throws(KeyStoreError) {
        do {
            if try queue.read({ try KeyStoreSchema.migrator.hasBeenSuperseded($0) }) {
                throw KeyStoreError(.unsupportedVersion, "the store was written by a newer version", path: path)
            }
            // Each migration commits in its own transaction, but another process opening the
            // same new store may run the same migration at the same moment; the loser fails
            // ("table exists") after the winner committed, so trying again finds it applied.
            var attempt = 0
            while true {
                do {
                    try KeyStoreSchema.migrator.migrate(queue)
                    break
                } catch {
                    attempt += 1
                    if attempt == 3 { throw error }
                }
            }
        } catch let error as KeyStoreError {
            throw error
        } catch {
            throw KeyStoreError(.io, "cannot migrate the store: \(error)", path: path)
        }
    }

    // MARK: Transactions

    /// Runs `body` in one immediate transaction; any throw rolls everything back.
    func write<T>(_ body: (Database) throws -> T) throws(KeyStoreError) -> T {
        do {
            return try queue.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        } catch {
            throw Self.mapped(error, path: path)
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws(KeyStoreError) -> T {
        do {
            return try queue.read(body)
        } catch {
            throw Self.mapped(error, path: path)
        }
    }

    private static func mapped(_ error: any Error, path: String) -> KeyStoreError {
        if let error = error as? KeyStoreError { return error }
        return KeyStoreError(.io, "\(error)", path: path)
    }

    func seal(_ plaintext: [UInt8], _ identity: DIDKey, _ table: String, _ parts: [String]) throws -> Data {
        Data(try sealer.seal(plaintext, identity: identity, table: table, key: parts))
    }

    func open(_ blob: Data, _ identity: DIDKey, _ table: String, _ parts: [String]) throws -> [UInt8] {
        try sealer.open(Array(blob), identity: identity, table: table, key: parts)
    }

    /// Throws `.unknownIdentity` unless `identity` is in the store.
    func requireIdentity(_ db: Database, _ identity: DIDKey) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM identities WHERE did = ?", arguments: [identity.did]) == true else {
            throw KeyStoreError(.unknownIdentity, "no identity \(identity.did) in this store", path: path)
        }
    }

    static func epochArgument(_ epoch: UInt64) throws -> Int64 {
        guard let value = Int64(exactly: epoch) else { throw KeyStoreError(.invalidArgument, "epoch \(epoch) out of range") }
        return value
    }

    static func convoArgument(_ convo: String) throws -> String {
        guard !convo.isEmpty, convo.utf8.count <= 512 else { throw KeyStoreError(.invalidArgument, "a convo id is 1...512 bytes") }
        return convo
    }
}
