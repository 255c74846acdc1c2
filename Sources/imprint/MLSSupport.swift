import ImprintEncoding
import Foundation
import ImprintMLS

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

/// Writes `bytes` to `path` atomically: a temporary file in the same directory,
/// flushed to disk, then renamed over the target. Readers see the old file or
/// the new one, never a partial write. `private` files get mode 0600.
func writeFileAtomically(_ path: String, _ bytes: [UInt8], private isPrivate: Bool = false) throws {
    let directory = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    let temp = (directory.isEmpty ? "." : directory) + "/.\(name).tmp-\(getpid())-\(UInt32.random(in: 0 ... .max))"
    let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL, isPrivate ? 0o600 : 0o644)
    guard fd >= 0 else { throw MLSCLIError.usage("cannot write \(path): \(String(cString: strerror(errno)))") }
    var ok = true
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                ok = false
                return
            }
            offset += n
        }
    }
    if ok { ok = fsync(fd) == 0 }
    close(fd)
    guard ok, rename(temp, path) == 0 else {
        let reason = String(cString: strerror(errno))
        unlink(temp)
        throw MLSCLIError.usage("cannot write \(path): \(reason)")
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
struct MLSIdentity: Codable {
    var name: String
    var suite: UInt16
    /// Signature private key, hex.
    var signaturePrivateKey: String

    var cipherSuite: CipherSuite { CipherSuite(rawValue: suite) }
    var credential: Credential { .basic(identity: Array(name.utf8)) }
}

/// The on-disk state of one `imprint mls` peer (`--dir`):
///
/// - `identity.json`: name, cipher suite and signature private key (mode 0600);
/// - `keypackages/<ref>.kp`: for each published KeyPackage, the KeyPackage and its
///   init and encryption private keys (TLS-encoded; deleted once used to join);
/// - `group.state`: the serialized ``MLSGroup`` (one group per directory).
///
/// Every file is replaced atomically. The files hold private keys in the clear:
/// the directory is a test and scripting peer, not a key store.
struct MLSStateDirectory {
    let path: String

    var identityPath: String { path + "/identity.json" }
    var groupPath: String { path + "/group.state" }
    var keyPackageDirectory: String { path + "/keypackages" }

    /// Creates the directory (and its key-package subdirectory) if needed.
    func create() throws {
        do {
            try FileManager.default.createDirectory(atPath: keyPackageDirectory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw MLSCLIError.usage("cannot create \(path): \(error.localizedDescription)")
        }
    }

    /// Takes the directory's exclusive lock (`.lock`, `flock`), held until the
    /// process exits, so concurrent invocations on one directory run one after
    /// the other instead of losing each other's state. Readers need no lock:
    /// every file is replaced atomically.
    func lock() throws {
        let fd = open(path + "/.lock", O_RDWR | O_CREAT, 0o600)
        // No directory yet: nothing to protect, and the command will say what is missing.
        if fd < 0 && errno == ENOENT { return }
        guard fd >= 0 else {
            throw MLSCLIError.usage("cannot open \(path)/.lock: \(String(cString: strerror(errno)))")
        }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw MLSCLIError.usage("cannot lock \(path): \(String(cString: strerror(errno)))") }
        }
        // The descriptor stays open on purpose: the lock lasts as long as the command.
    }

    func loadIdentity() throws -> (MLSIdentity, signatureKey: [UInt8]) {
        guard let data = FileManager.default.contents(atPath: identityPath) else {
            throw MLSCLIError.usage("\(path) has no identity; run `imprint mls init --name <n> --dir \(path)` first")
        }
        guard let identity = try? JSONDecoder().decode(MLSIdentity.self, from: data),
              let key = Hex.decode(identity.signaturePrivateKey)
        else { throw MLSCLIError.corrupt("\(identityPath) is corrupt") }
        guard identity.cipherSuite.isSupported, (try? identity.cipherSuite.signaturePublicKey(privateKey: key)) != nil else {
            throw MLSCLIError.corrupt("\(identityPath) holds an unusable signature key")
        }
        return (identity, key)
    }

    func saveIdentity(_ identity: MLSIdentity) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try writeFileAtomically(identityPath, Array(try encoder.encode(identity)), private: true)
    }

    var hasGroup: Bool { FileManager.default.fileExists(atPath: groupPath) }

    func loadGroup() throws -> MLSGroup {
        guard let data = FileManager.default.contents(atPath: groupPath) else {
            throw MLSCLIError.usage("\(path) is not in a group; create-group or join first")
        }
        do {
            return try MLSGroup(serializedState: [UInt8](data))
        } catch {
            throw MLSCLIError.corrupt("\(groupPath) is corrupt: \(error)")
        }
    }

    func saveGroup(_ group: MLSGroup) throws {
        try writeFileAtomically(groupPath, group.serializedState(), private: true)
    }

    func deleteGroup() throws {
        if unlink(groupPath) != 0 && errno != ENOENT {
            throw MLSCLIError.usage("cannot delete \(groupPath): \(String(cString: strerror(errno)))")
        }
    }

    /// Stores a KeyPackage with its private keys, named by its KeyPackageRef.
    func saveKeyPackage(_ keyPackage: KeyPackage, _ keys: KeyPackagePrivateKeys) throws {
        var w = TLSWriter()
        w.writeOpaque(keyPackage.tlsBytes)
        w.writeOpaque(keys.initKey)
        w.writeOpaque(keys.encryptionKey)
        try create()
        try writeFileAtomically(keyPackageDirectory + "/\(Hex.encode(try keyPackage.reference())).kp", w.bytes, private: true)
    }

    /// The stored KeyPackage whose reference is `ref`, with its private keys, if any.
    func keyPackage(reference ref: [UInt8], signatureKey: [UInt8]) throws -> (KeyPackage, KeyPackagePrivateKeys, path: String)? {
        let file = keyPackageDirectory + "/\(Hex.encode(ref)).kp"
        guard let data = FileManager.default.contents(atPath: file) else { return nil }
        do {
            var r = TLSReader([UInt8](data))
            let kp = try KeyPackage(tlsBytes: try r.readOpaque())
            let keys = KeyPackagePrivateKeys(initKey: try r.readOpaque(), encryptionKey: try r.readOpaque(), signatureKey: signatureKey)
            try r.finish()
            guard try kp.reference() == ref else { throw MLSError(.invalidValue, "reference differs from the file name") }
            return (kp, keys, file)
        } catch {
            throw MLSCLIError.corrupt("\(file) is corrupt: \(error)")
        }
    }
}
