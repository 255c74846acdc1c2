import ImprintEncoding
import Foundation
import ImprintMLS
import Testing

/// The repository root, from this file's location.
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0 ..< 3 { url.deleteLastPathComponent() }
    return url.path
}()

/// Errors of the interop harness.
struct InteropError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// ONE long-running `Tests/Interop/mls_rs_peer.py` process (AWS mls-rs through its
/// Python bindings), shared by every interop test: the bindings keep key-package
/// secrets in memory only, so all mls-rs clients must live in one process.
/// Requests are serialized by a lock; each test uses its own client names.
final class MLSRsPeer: @unchecked Sendable {
    /// The venv's python, created by `Benchmarks/peers/setup.sh` (which `scripts/test.sh` runs).
    static let python = repositoryRoot + "/.venv-peers/bin/python"

    /// Whether the peer can run here. When it cannot, say so loudly: these tests
    /// are then skipped, which CI never allows (scripts/test.sh creates the venv).
    static let available: Bool = {
        if FileManager.default.isExecutableFile(atPath: python) { return true }
        let warning = """

        !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
        !! SKIPPING the mls-rs interop tests: \(python) is missing.
        !! Create it with `bash Benchmarks/peers/setup.sh` (scripts/test.sh does).
        !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!

        """
        FileHandle.standardError.write(Data(warning.utf8))
        return false
    }()

    /// The shared process, started on first use.
    static let shared: Result<MLSRsPeer, InteropError> = Result { try MLSRsPeer() }.mapError { InteropError("\($0)") }

    private let process = Process()
    private let input: FileHandle
    private let output: FileHandle
    private var buffer = Data()
    private var nextID = 0
    private let lock = NSLock()

    private init() throws {
        process.executableURL = URL(fileURLWithPath: MLSRsPeer.python)
        process.arguments = [repositoryRoot + "/Tests/Interop/mls_rs_peer.py"]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        try process.run()
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading
        // When the test process exits, the driver sees EOF on stdin and exits too.
    }

    /// Sends one request and returns the reply; throws if the driver reports an error.
    @discardableResult
    func call(_ cmd: String, _ fields: [String: Any] = [:]) throws -> [String: Any] {
        let reply = try send(cmd, fields)
        guard reply["ok"] as? Bool == true else {
            throw InteropError("mls-rs \(cmd) failed: \(reply["error"] ?? "?")")
        }
        return reply
    }

    /// Sends one request and returns the reply as is (`ok` may be false).
    func send(_ cmd: String, _ fields: [String: Any] = [:]) throws -> [String: Any] {
        lock.lock()
        defer { lock.unlock() }
        nextID += 1
        var request = fields
        request["cmd"] = cmd
        request["id"] = nextID
        var line = try JSONSerialization.data(withJSONObject: request)
        line.append(0x0a)
        try input.write(contentsOf: line)
        while true {
            if let nl = buffer.firstIndex(of: 0x0a) {
                let lineData = buffer[buffer.startIndex ..< nl]
                buffer = Data(buffer[(nl + 1)...])
                guard let reply = try JSONSerialization.jsonObject(with: lineData) as? [String: Any] else {
                    throw InteropError("driver reply is not a JSON object")
                }
                guard reply["id"] as? Int == nextID else { throw InteropError("driver reply out of order: \(reply)") }
                return reply
            }
            // `availableData` returns as soon as some bytes arrive (`read(upToCount:)` waits for all of them).
            let chunk = output.availableData
            guard !chunk.isEmpty else {
                throw InteropError("mls_rs_peer.py exited (status \(process.isRunning ? "running" : "\(process.terminationStatus)"))")
            }
            buffer.append(chunk)
        }
    }

    // MARK: Typed helpers

    /// A new mls-rs client; returns its first KeyPackage (an MLSMessage).
    func newClient(_ name: String, ratchetTreeExtension: Bool = true) throws -> [UInt8] {
        try bytes(call("new_client", ["name": name, "ratchet_tree_extension": ratchetTreeExtension]), "key_package")
    }

    func exportSecret(_ client: String, label: String = "interop", context: String = "ctx", length: Int = 32) throws -> [UInt8] {
        try bytes(call("export_secret", ["client": client, "label": label, "context": context, "length": length]), "secret")
    }

    func encrypt(_ client: String, _ text: String) throws -> [UInt8] {
        try bytes(call("encrypt", ["client": client, "plaintext": b64(Array(text.utf8))]), "message")
    }

    func epoch(_ client: String) throws -> UInt64 {
        guard let e = try call("epoch", ["client": client])["epoch"] as? Int else { throw InteropError("no epoch") }
        return UInt64(e)
    }

    /// Processes a message; returns the reply (kind, plaintext, removed, epoch).
    @discardableResult
    func process(_ client: String, _ message: [UInt8]) throws -> [String: Any] {
        try call("process", ["client": client, "message": b64(message)])
    }

    /// Decrypts an application message to text.
    func decrypt(_ client: String, _ message: [UInt8]) throws -> String {
        let reply = try process(client, message)
        guard reply["kind"] as? String == "application" else { throw InteropError("expected an application message, got \(reply)") }
        return String(decoding: try bytes(reply, "plaintext"), as: UTF8.self)
    }

    func bytes(_ reply: [String: Any], _ key: String) throws -> [UInt8] {
        guard let s = reply[key] as? String, let d = Data(base64Encoded: s) else { throw InteropError("reply has no \(key): \(reply)") }
        return [UInt8](d)
    }
}

func b64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

/// The shared peer, or a test failure explaining why it could not start.
func mlsRs() throws -> MLSRsPeer {
    try MLSRsPeer.shared.get()
}

/// One of our members, driven in-process through ``MLSGroup``.
struct OurMember {
    let name: String
    let signatureKey: [UInt8]
    var group: MLSGroup?
    var pendingKeyPackage: (KeyPackage, KeyPackagePrivateKeys)?

    init(_ name: String) throws {
        self.name = name
        signatureKey = try CipherSuite.x25519Aes128GcmSha256Ed25519.generateSignatureKeyPair().privateKey
    }

    var credential: Credential { .basic(identity: Array(name.utf8)) }

    /// A fresh KeyPackage as an MLSMessage; its private keys are kept for ``join(_:tree:)``.
    mutating func keyPackage() throws -> [UInt8] {
        let (kp, keys) = try KeyPackage.create(suite: .x25519Aes128GcmSha256Ed25519, credential: credential, signaturePrivateKey: signatureKey)
        pendingKeyPackage = (kp, keys)
        return MLSMessage.keyPackage(kp).tlsBytes
    }

    mutating func createGroup(id: [UInt8]) throws {
        group = try MLSGroup.create(suite: .x25519Aes128GcmSha256Ed25519, groupID: id, credential: credential, signaturePrivateKey: signatureKey)
    }

    mutating func join(_ welcome: [UInt8], tree: [UInt8]? = nil) throws {
        guard case let .welcome(w) = try MLSMessage(tlsBytes: welcome), let (kp, keys) = pendingKeyPackage else {
            throw InteropError("\(name): not a Welcome, or no KeyPackage")
        }
        group = try MLSGroup.join(welcome: w, keyPackage: kp, privateKeys: keys, ratchetTree: try tree.map { try RatchetTreeNodes(tlsBytes: $0) })
        pendingKeyPackage = nil
    }

    /// Processes a message; returns what it was.
    @discardableResult
    mutating func process(_ message: [UInt8]) throws -> ProcessedMessage {
        guard var g = group else { throw InteropError("\(name) is in no group") }
        let result = try g.process(try MLSMessage(tlsBytes: message))
        group = g
        return result
    }

    mutating func decrypt(_ message: [UInt8]) throws -> String {
        guard case let .application(data, _, _) = try process(message) else { throw InteropError("\(name): not an application message") }
        return String(decoding: data, as: UTF8.self)
    }

    mutating func encrypt(_ text: String) throws -> [UInt8] {
        guard var g = group else { throw InteropError("\(name) is in no group") }
        let m = try g.encrypt(Array(text.utf8))
        group = g
        return m.tlsBytes
    }

    mutating func commit(_ proposals: [Proposal] = [], options: CommitOptions = .init()) throws -> CommitOutput {
        guard var g = group else { throw InteropError("\(name) is in no group") }
        let out = try g.commit(proposals, options: options)
        group = g
        return out
    }

    func exportSecret(label: String = "interop", context: String = "ctx", length: Int = 32) throws -> [UInt8] {
        guard let g = group else { throw InteropError("\(name) is in no group") }
        return try g.exportSecret(label: label, context: Array(context.utf8), length: length)
    }

    var epoch: UInt64 { group?.epoch ?? 0 }

    func leaf(of name: String) throws -> UInt32 {
        guard let m = group?.members.first(where: { $0.credential == .basic(identity: Array(name.utf8)) }) else {
            throw InteropError("\(name) is not a member")
        }
        return m.leafIndex
    }
}
