import Foundation
import ImprintEd25519
import ImprintEncoding
import ImprintFiles
import ImprintKeys
import ImprintMLS
import ImprintSync


/// Errors of the `imprint mls` commands, by exit code (see the CLI contract).
enum MLSCLIError: Error, CustomStringConvertible {
    /// Usage or user error: exit 1 (bad option values, missing files, no group yet...).
    case usage(String)
    /// Corrupt or hostile data (input messages or files in the state directory): exit 2.
    case corrupt(String)

    var description: String {
        switch self {
        case let .usage(m), let .corrupt(m): m
        }
    }

    var exitCode: Int32 {
        switch self {
        case .usage: 1
        case .corrupt: 2
        }
    }
}

/// Runs a command body, turning every failure into one `error:` line on stderr
/// and the contract's exit code (1 usage, 2 corrupt or hostile data).
func runMLSCommand(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as MLSCLIError {
        try fail(error.description, code: error.exitCode)
    } catch let error as MLSError {
        // Every MLSError comes from decoding or validating bytes we were given.
        try fail("\(error)", code: 2)
    } catch let error as KeyStoreError where error == .corrupt || error == .unsupportedVersion {
        // The key store in --dir holds data that does not authenticate or parse.
        try fail("\(error)", code: 2)
    } catch {
        // File-system and encoding failures of our own: user-level errors.
        try fail("\(error)", code: 1)
    }
}

private func fail(_ message: String, code: Int32) throws -> Never {
    let line = "error: " + message.replacingOccurrences(of: "\n", with: " ") + "\n"
    FileHandle.standardError.write(Data(line.utf8))
    exit(code)
}

// MARK: Bytes

/// Cryptographically random bytes.
func randomBytes(_ count: Int) -> [UInt8] {
    var rng = SystemRandomNumberGenerator()
    return (0 ..< count).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
}

// MARK: Files

/// Reads a whole file given on the command line; a missing or unreadable file is a usage error.
func readInputFile(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw MLSCLIError.usage("cannot read \(path)")
    }
    return [UInt8](data)
}

/// Writes `bytes` to `path` atomically (`AtomicFile`: temporary file, fsync, rename):
/// readers see the old file or the new one, never a partial write.
func writeFileAtomically(_ path: String, _ bytes: [UInt8]) throws {
    do {
        try AtomicFile.write(bytes, to: path)
    } catch {
        throw MLSCLIError.usage("cannot write \(path): \(error)")
    }
}

/// Reads an `MLSMessage` file; undecodable bytes are corrupt input (exit 2).
func readMLSMessage(_ path: String) throws -> MLSMessage {
    let bytes = try readInputFile(path)
    do {
        return try MLSMessage(tlsBytes: bytes)
    } catch {
        throw MLSCLIError.corrupt("\(path) is not an MLSMessage: \(error)")
    }
}

// MARK: State directory

/// The long-term identity of an `imprint mls` peer: a name (its basic
/// credential) and a signature key pair for one cipher suite.
struct MLSIdentity {
    var name: String
    var suite: UInt16
    var signaturePublicKey: [UInt8]
    var signaturePrivateKey: [UInt8]

    var cipherSuite: CipherSuite { CipherSuite(rawValue: suite) }
    var credential: Credential { .basic(identity: Array(name.utf8)) }
}

/// The state of one `imprint mls` peer (`--dir D`), kept in a key store (docs/keys.md):
///
/// - `D/keys.sqlite`: an `SQLiteKeyStore` unlocked by the key file `D/keys.key` (0600). Its
///   device identity owns everything below; the MLS signature key is its `signature_keys` row
///   (credential = `--name`), each published KeyPackage's private keys a `key_package_keys`
///   row (deleted once used to join), the serialized ``MLSGroup`` the `group_states` row of
///   convo ``convo`` (one group per directory), with the epoch as its processed cursor.
/// - `D/.lock`: a `FileLock` each mutating command holds until it exits, so concurrent
///   invocations on one directory run one after the other instead of losing each other's
///   state. Readers need no lock: every save is one SQLite transaction.
///
/// Secrets are sealed at rest, and used ones are deleted forward-securely; the key file
/// protects them against other local users, not against a thief of the disk.
struct MLSStateDirectory {
    let path: String
    /// The convo id of the directory's one group.
    static let convo = "cli"

    var storePath: String { path + "/keys.sqlite" }
    var keyFilePath: String { path + "/keys.key" }

    /// Creates the directory (mode 0700) if needed.
    func create() throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw MLSCLIError.usage("cannot create \(path): \(error.localizedDescription)")
        }
    }

    /// Takes the directory's exclusive lock (`.lock`), held until the process exits.
    func lock() throws {
        // No directory yet: nothing to protect, and the command will say what is missing.
        guard FileManager.default.fileExists(atPath: path) else { return }
        do {
            // The handle is dropped on purpose: the lock lasts as long as the command.
            _ = try FileLock(path: path + "/.lock", timeout: .seconds(3600)).acquire()
        } catch {
            throw MLSCLIError.usage("cannot lock \(path): \(error)")
        }
    }

    /// The key store, if the directory has one (`init` made it).
    func store() throws -> SQLiteKeyStore? {
        guard FileManager.default.fileExists(atPath: storePath) else { return nil }
        return try SQLiteKeyStore(path: storePath, unlock: .keyFile(path: keyFilePath))
    }

    private func requireStore() throws -> (SQLiteKeyStore, DIDKey) {
        guard let store = try store() else {
            throw MLSCLIError.usage("\(path) has no identity; run `imprint mls init --name <n> --dir \(path)` first")
        }
        return (store, try store.deviceIdentity().did)
    }

    var hasIdentity: Bool {
        get throws {
            guard let store = try store() else { return false }
            return try !store.signatureKeys(for: store.deviceIdentity().did).isEmpty
        }
    }

    func loadIdentity() throws -> (MLSIdentity, signatureKey: [UInt8]) {
        let (store, me) = try requireStore()
        let keys = try store.signatureKeys(for: me)
        guard let key = keys.first else {
            throw MLSCLIError.usage("\(path) has no identity; run `imprint mls init --name <n> --dir \(path)` first")
        }
        guard keys.count == 1, let name = String(validating: key.credential, as: UTF8.self) else {
            throw MLSCLIError.corrupt("\(storePath) holds an unusable identity")
        }
        let identity = MLSIdentity(name: name, suite: key.suite, signaturePublicKey: key.publicKey, signaturePrivateKey: key.privateKey)
        guard identity.cipherSuite.isSupported,
              (try? identity.cipherSuite.signaturePublicKey(privateKey: key.privateKey)) == key.publicKey else {
            throw MLSCLIError.corrupt("\(storePath) holds an unusable signature key")
        }
        return (identity, key.privateKey)
    }

    func saveIdentity(_ identity: MLSIdentity) throws {
        try create()
        let store = try SQLiteKeyStore(path: storePath, unlock: .keyFile(path: keyFilePath))
        try store.saveSignatureKey(SignatureKey(suite: identity.suite, publicKey: identity.signaturePublicKey,
                                                privateKey: identity.signaturePrivateKey, credential: Array(identity.name.utf8)),
                                   for: store.deviceIdentity().did)
    }

    var hasGroup: Bool {
        get throws {
            guard let store = try store() else { return false }
            return try store.groupState(convo: Self.convo, for: store.deviceIdentity().did) != nil
        }
    }

    func loadGroup() throws -> MLSGroup {
        let (store, me) = try requireStore()
        guard let record = try store.groupState(convo: Self.convo, for: me) else {
            throw MLSCLIError.usage("\(path) is not in a group; create-group or join first")
        }
        do {
            return try MLSGroup(serializedState: record.state)
        } catch {
            throw MLSCLIError.corrupt("the group state in \(storePath) is corrupt: \(error)")
        }
    }

    /// Saves the group with its epoch as the processed cursor, in one transaction.
    func saveGroup(_ group: MLSGroup) throws {
        let (store, me) = try requireStore()
        try store.saveGroupState(GroupStateRecord(state: group.serializedState(), cursor: ProcessedCursor(epoch: group.epoch, seq: 0)),
                                 convo: Self.convo, for: me)
    }

    func deleteGroup() throws {
        let (store, me) = try requireStore()
        try store.deleteGroup(convo: Self.convo, for: me)
    }

    /// Stores a KeyPackage with its private keys, named by its KeyPackageRef (the one
    /// stored form, `StoredKeyPackage`, that shared documents use too).
    func saveKeyPackage(_ keyPackage: KeyPackage, _ keys: KeyPackagePrivateKeys) throws {
        let (store, me) = try requireStore()
        try store.saveKeyPackagePrivateKey(StoredKeyPackage(keyPackage: keyPackage, privateKeys: keys).bytes,
                                           reference: try keyPackage.reference(), for: me)
    }

    /// The stored KeyPackage whose reference is `ref`, with its private keys, if any.
    func keyPackage(reference ref: [UInt8], signatureKey: [UInt8]) throws -> (KeyPackage, KeyPackagePrivateKeys)? {
        guard !ref.isEmpty, ref.count <= 64 else { return nil }
        let (store, me) = try requireStore()
        guard let bytes = try store.keyPackagePrivateKey(reference: ref, for: me) else { return nil }
        do {
            let stored = try StoredKeyPackage(bytes: bytes, reference: ref)
            return (stored.keyPackage, stored.privateKeys(signatureKey: signatureKey))
        } catch {
            throw MLSCLIError.corrupt("key package \(Hex.encode(ref)) in \(storePath) is corrupt: \(error)")
        }
    }

    /// Deletes a used KeyPackage's private keys (forward-securely).
    func deleteKeyPackage(reference ref: [UInt8]) throws {
        let (store, me) = try requireStore()
        try store.deleteKeyPackagePrivateKey(reference: ref, for: me)
    }
}
