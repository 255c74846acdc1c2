import Foundation
import ImprintKeys
import ImprintMLS
import Testing

/// The `imprint` executable built next to the test bundle (`swift build --build-tests` builds it).
func imprintExecutable() throws -> String {
    let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    var directory = (exe as NSString).deletingLastPathComponent
    for _ in 0 ..< 3 {
        let candidate = directory + "/imprint"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = (directory as NSString).deletingLastPathComponent
    }
    throw InteropError("the imprint executable is not built next to \(exe); run `swift build --build-tests` first")
}

/// What one `imprint` invocation did.
struct CLIResult {
    let status: Int32
    let stdout: [UInt8]
    let stderr: String
    var text: String { String(decoding: stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
}

/// Runs `imprint args...` and requires success.
@discardableResult
func imprintOK(_ args: String...) throws -> CLIResult {
    let r = try imprintArgs(args)
    guard r.status == 0 else { throw InteropError("imprint \(args.joined(separator: " ")) exited \(r.status): \(r.stderr)") }
    return r
}

/// Runs `imprint args...` to completion. Outputs here are small (well under a
/// pipe buffer), so reading them after exit cannot deadlock.
func imprintArgs(_ args: [String]) throws -> CLIResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: try imprintExecutable())
    p.arguments = args
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    p.waitUntilExit()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    return CLIResult(status: p.terminationStatus, stdout: [UInt8](o), stderr: String(decoding: e, as: UTF8.self))
}

/// A fresh temporary directory.
func temporaryDirectory() throws -> String {
    let dir = NSTemporaryDirectory() + "imprint-mls-cli-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

func readBytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
func writeBytes(_ path: String, _ bytes: [UInt8]) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

/// The `imprint mls` contract, proven against mls-rs: every step goes through
/// the CLI (state persisted between invocations) on our side.
@Suite("imprint mls CLI vs mls-rs", .serialized, .enabled(if: MLSRsPeer.available, "the mls-rs venv (.venv-peers) is missing"))
struct MLSCLIInteropTests {
    @Test("CLI peers and mls-rs: add, join, messages, update, remove, exporter, lock-out")
    func cliAgainstMLSRs() throws {
        let peer = try mlsRs()
        let tmp = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        let alice = tmp + "/alice", carol = tmp + "/carol"

        try imprintOK("mls", "init", "--name", "cli-alice", "--dir", alice)
        let gid = try imprintOK("mls", "create-group", "--dir", alice, "--group-id", "c11c11").text
        #expect(gid == "c11c11")
        #expect(try imprintOK("mls", "epoch", "--dir", alice).text == "0")

        // We add an mls-rs member, tree out of band (--tree-out); mls-rs joins.
        try writeBytes(tmp + "/bob.kp", try peer.newClient("cli-bob"))
        let epoch1 = try imprintOK("mls", "add", "--dir", alice, "--kp", tmp + "/bob.kp", "--commit-out", tmp + "/c1.bin",
                                   "--welcome-out", tmp + "/w1.bin", "--tree-out", tmp + "/t1.bin").text
        #expect(epoch1 == "1")
        try peer.call("join", ["client": "cli-bob", "welcome": b64(try readBytes(tmp + "/w1.bin")),
                               "ratchet_tree": b64(try readBytes(tmp + "/t1.bin")), "group": gid, "epoch": 1])
        func agree(_ epoch: Int, _ dirs: [String], _ clients: [String]) throws {
            var secrets = Set<String>()
            for d in dirs {
                #expect(try imprintOK("mls", "epoch", "--dir", d).text == "\(epoch)")
                secrets.insert(try imprintOK("mls", "export-secret", "--dir", d, "--label", "interop", "--context", "ctx", "--length", "32").text)
            }
            for c in clients {
                #expect(try peer.epoch(c) == UInt64(epoch))
                secrets.insert(hex(try peer.exportSecret(c)))
            }
            #expect(secrets.count == 1, "exporter secrets differ at epoch \(epoch)")
        }
        try agree(1, [alice], ["cli-bob"])

        // Application messages both ways.
        try imprintOK("mls", "encrypt", "--dir", alice, "--text", "hi bob, from the CLI", "--out", tmp + "/m1.bin")
        #expect(try peer.decrypt("cli-bob", try readBytes(tmp + "/m1.bin")) == "hi bob, from the CLI")
        try writeBytes(tmp + "/m2.bin", try peer.encrypt("cli-bob", "hi alice, from mls-rs"))
        #expect(try imprintOK("mls", "process", "--dir", alice, "--msg", tmp + "/m2.bin").stdout == Array("hi alice, from mls-rs".utf8))
        // --json: one object; the sender is mls-rs's leaf.
        try writeBytes(tmp + "/m2b.bin", try peer.encrypt("cli-bob", "again"))
        let processed = try #require(try JSONSerialization.jsonObject(with: Data(try imprintOK("mls", "process", "--dir", alice, "--msg", tmp + "/m2b.bin", "--json").stdout)) as? [String: Any])
        #expect(processed["kind"] as? String == "application")
        #expect(processed["plaintext"] as? String == "again")
        #expect(processed["sender"] as? Int == 1)
        #expect(processed["epoch"] as? Int == 1)

        // mls-rs commits an UpdatePath; the CLI processes it.
        try writeBytes(tmp + "/c2.bin", try peer.bytes(try peer.call("update", ["client": "cli-bob"]), "commit"))
        #expect(try imprintOK("mls", "process", "--dir", alice, "--msg", tmp + "/c2.bin").text == "2")
        try agree(2, [alice], ["cli-bob"])

        // mls-rs adds a second CLI peer; it joins through the CLI from the mls-rs Welcome.
        try imprintOK("mls", "init", "--name", "cli-carol", "--dir", carol)
        try imprintOK("mls", "keypackage", "--dir", carol, "--out", tmp + "/carol.kp")
        let bobAdd = try peer.call("add", ["client": "cli-bob", "key_packages": [b64(try readBytes(tmp + "/carol.kp"))]])
        try writeBytes(tmp + "/c3.bin", try peer.bytes(bobAdd, "commit"))
        try writeBytes(tmp + "/w3.bin", try peer.bytes(bobAdd, "welcome"))
        #expect(try imprintOK("mls", "process", "--dir", alice, "--msg", tmp + "/c3.bin").text == "3")
        #expect(try imprintOK("mls", "join", "--dir", carol, "--welcome", tmp + "/w3.bin").text == "\(gid) 3")
        #expect(try imprintOK("mls", "members", "--dir", carol).text == "0 cli-alice\n1 cli-bob\n2 cli-carol")
        try agree(3, [alice, carol], ["cli-bob"])

        // The CLI commits an UpdatePath as a PrivateMessage; mls-rs and the other CLI peer process it.
        #expect(try imprintOK("mls", "update", "--dir", carol, "--commit-out", tmp + "/c4.bin", "--private-handshake").text == "4")
        #expect(try peer.process("cli-bob", try readBytes(tmp + "/c4.bin"))["kind"] as? String == "commit")
        #expect(try imprintOK("mls", "process", "--dir", alice, "--msg", tmp + "/c4.bin").text == "4")
        try agree(4, [alice, carol], ["cli-bob"])

        // mls-rs proposes an Add; the CLI peers store it; `update` commits it (with a Welcome).
        let danKP = try peer.newClient("cli-dan")
        let proposal = try #require(try peer.call("propose_add", ["client": "cli-bob", "key_packages": [b64(danKP)]])["proposals"] as? [String])
        try writeBytes(tmp + "/p5.bin", [UInt8](try #require(Data(base64Encoded: proposal[0]))))
        #expect(try imprintOK("mls", "process", "--dir", alice, "--msg", tmp + "/p5.bin").text == "proposal")
        #expect(try imprintOK("mls", "process", "--dir", carol, "--msg", tmp + "/p5.bin").text == "proposal")
        #expect(try imprintArgs(["mls", "update", "--dir", alice, "--commit-out", tmp + "/c5.bin"]).status == 1)  // Add pending: needs --welcome-out
        #expect(try imprintOK("mls", "update", "--dir", alice, "--commit-out", tmp + "/c5.bin", "--welcome-out", tmp + "/w5.bin").text == "5")
        #expect(try peer.process("cli-bob", try readBytes(tmp + "/c5.bin"))["kind"] as? String == "commit")
        #expect(try imprintOK("mls", "process", "--dir", carol, "--msg", tmp + "/c5.bin").text == "5")
        try peer.call("join", ["client": "cli-dan", "welcome": b64(try readBytes(tmp + "/w5.bin")), "group": gid, "epoch": 5])
        try agree(5, [alice, carol], ["cli-bob", "cli-dan"])

        // The CLI removes an mls-rs member by name; it is told, and cannot read what follows.
        #expect(try imprintOK("mls", "remove", "--dir", alice, "--member", "cli-bob", "--commit-out", tmp + "/c6.bin").text == "6")
        #expect(try peer.process("cli-bob", try readBytes(tmp + "/c6.bin"))["removed"] as? Bool == true)
        #expect(try imprintOK("mls", "process", "--dir", carol, "--msg", tmp + "/c6.bin").text == "6")
        try peer.process("cli-dan", try readBytes(tmp + "/c6.bin"))
        try agree(6, [alice, carol], ["cli-dan"])
        try writeBytes(tmp + "/big.txt", Array(repeating: 0x61, count: 5000))
        try imprintOK("mls", "encrypt", "--dir", carol, "--in", tmp + "/big.txt", "--out", tmp + "/m3.bin")
        try imprintOK("mls", "process", "--dir", alice, "--msg", tmp + "/m3.bin", "--out", tmp + "/m3.txt")
        #expect(try readBytes(tmp + "/m3.txt") == Array(repeating: 0x61, count: 5000))
        #expect(try peer.decrypt("cli-dan", try readBytes(tmp + "/m3.bin")) == String(repeating: "a", count: 5000))
        #expect(try peer.send("process", ["client": "cli-bob", "message": b64(try readBytes(tmp + "/m3.bin"))])["ok"] as? Bool == false)

        // Removing the other CLI peer by index: it sees `removed` and leaves no group state behind.
        #expect(try imprintOK("mls", "remove", "--dir", alice, "--index", "2", "--commit-out", tmp + "/c7.bin").text == "7")
        #expect(try imprintOK("mls", "process", "--dir", carol, "--msg", tmp + "/c7.bin").text == "removed")
        #expect(try imprintArgs(["mls", "epoch", "--dir", carol]).status == 1)
        try peer.process("cli-dan", try readBytes(tmp + "/c7.bin"))
        try agree(7, [alice], ["cli-dan"])
        #expect(try imprintOK("mls", "members", "--dir", alice).text == "0 cli-alice\n3 cli-dan")
    }
}

extension MLSCLIInteropTests {
    @Test("CLI peer joins an mls-rs group with the tree out of band (--tree); commits and messages both ways")
    func cliJoinsMLSRsGroup() throws {
        let peer = try mlsRs()
        let tmp = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        let eve = tmp + "/eve"
        _ = try peer.newClient("cli-owner", ratchetTreeExtension: false)
        let gid = try #require(try peer.call("create_group", ["client": "cli-owner"])["group"] as? String)
        try imprintOK("mls", "init", "--name", "cli-eve", "--dir", eve)
        try imprintOK("mls", "keypackage", "--dir", eve, "--out", tmp + "/eve.kp")
        let add = try peer.call("add", ["client": "cli-owner", "key_packages": [b64(try readBytes(tmp + "/eve.kp"))]])
        try writeBytes(tmp + "/w.bin", try peer.bytes(add, "welcome"))
        try writeBytes(tmp + "/t.bin", try peer.bytes(add, "ratchet_tree"))
        // Without the tree the join cannot work; the used KeyPackage is kept until a join succeeds.
        #expect(try imprintArgs(["mls", "join", "--dir", eve, "--welcome", tmp + "/w.bin"]).status == 2)
        #expect(try imprintOK("mls", "join", "--dir", eve, "--welcome", tmp + "/w.bin", "--tree", tmp + "/t.bin").text == "\(gid) 1")
        #expect(try cliKeyStore(eve).keyPackageReferences(for: try cliKeyStore(eve).deviceIdentity().did).isEmpty)

        func agree(_ epoch: Int) throws {
            #expect(try imprintOK("mls", "epoch", "--dir", eve).text == "\(epoch)")
            #expect(try peer.epoch("cli-owner") == UInt64(epoch))
            let ours = try imprintOK("mls", "export-secret", "--dir", eve, "--label", "L", "--context", "C", "--length", "48").text
            #expect(ours == hex(try peer.exportSecret("cli-owner", label: "L", context: "C", length: 48)))
        }
        try agree(1)
        try writeBytes(tmp + "/m1.bin", try peer.encrypt("cli-owner", "to eve"))
        #expect(try imprintOK("mls", "process", "--dir", eve, "--msg", tmp + "/m1.bin").stdout == Array("to eve".utf8))
        try imprintOK("mls", "encrypt", "--dir", eve, "--text", "to owner", "--out", tmp + "/m2.bin")
        #expect(try peer.decrypt("cli-owner", try readBytes(tmp + "/m2.bin")) == "to owner")
        #expect(try imprintOK("mls", "update", "--dir", eve, "--commit-out", tmp + "/c2.bin").text == "2")
        #expect(try peer.process("cli-owner", try readBytes(tmp + "/c2.bin"))["path"] as? Bool == true)
        try agree(2)
        try writeBytes(tmp + "/c3.bin", try peer.bytes(try peer.call("update", ["client": "cli-owner"]), "commit"))
        #expect(try imprintOK("mls", "process", "--dir", eve, "--msg", tmp + "/c3.bin").text == "3")
        try agree(3)
        // A replayed commit of a past epoch is rejected as hostile input, and changes nothing.
        #expect(try imprintArgs(["mls", "process", "--dir", eve, "--msg", tmp + "/c3.bin"]).status == 2)
        try agree(3)
    }
}

/// Exit codes and error lines of `imprint mls` (no mls-rs needed).
@Suite("imprint mls CLI errors")
struct MLSCLIErrorTests {
    @Test("usage errors exit 1, corrupt input exits 2, each with one error: line")
    func exitCodes() throws {
        let tmp = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        let d = tmp + "/p"
        // No identity yet.
        let noIdentity = try imprintArgs(["mls", "create-group", "--dir", d])
        #expect(noIdentity.status == 1)
        #expect(noIdentity.stderr.hasPrefix("error: ") && noIdentity.stderr.split(separator: "\n").count == 1)
        try imprintOK("mls", "init", "--name", "solo", "--dir", d)
        #expect(try imprintArgs(["mls", "init", "--name", "solo", "--dir", d]).status == 1)
        #expect(try imprintArgs(["mls", "epoch", "--dir", d]).status == 1)  // no group
        try imprintOK("mls", "create-group", "--dir", d)
        #expect(try imprintArgs(["mls", "encrypt", "--dir", d, "--out", tmp + "/x.bin"]).status == 1)  // neither --text nor --in
        #expect(try imprintArgs(["mls", "remove", "--dir", d, "--member", "nobody", "--commit-out", tmp + "/x.bin"]).status == 1)
        #expect(try imprintArgs(["mls", "process", "--dir", d, "--msg", tmp + "/missing.bin"]).status == 1)

        // Hostile bytes: not an MLSMessage, and a tampered application message.
        try writeBytes(tmp + "/junk.bin", [0x00, 0x01, 0x00, 0x02, 0xff, 0xff])
        let junk = try imprintArgs(["mls", "process", "--dir", d, "--msg", tmp + "/junk.bin"])
        #expect(junk.status == 2)
        #expect(junk.stderr.hasPrefix("error: ") && junk.stderr.split(separator: "\n").count == 1)
        try imprintOK("mls", "encrypt", "--dir", d, "--text", "secret", "--out", tmp + "/m.bin")
        var tampered = try readBytes(tmp + "/m.bin")
        tampered[tampered.count - 3] ^= 0x40
        try writeBytes(tmp + "/t.bin", tampered)
        #expect(try imprintArgs(["mls", "process", "--dir", d, "--msg", tmp + "/t.bin"]).status == 2)
        // A corrupt group state is corrupt data too; the state is replaced atomically, never half-written.
        let store = try cliKeyStore(d)
        try store.saveGroupState(GroupStateRecord(state: Array("IMLS".utf8) + [0, 1, 9], cursor: .start), convo: "cli",
                                 for: try store.deviceIdentity().did)
        #expect(try imprintArgs(["mls", "epoch", "--dir", d]).status == 2)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: d).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty)
    }

    @Test("concurrent invocations on one directory are serialized (no sender-ratchet reuse)")
    func concurrentEncrypts() throws {
        let tmp = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        let a = tmp + "/a", b = tmp + "/b"
        try imprintOK("mls", "init", "--name", "a", "--dir", a)
        try imprintOK("mls", "init", "--name", "b", "--dir", b)
        try imprintOK("mls", "create-group", "--dir", a)
        try imprintOK("mls", "keypackage", "--dir", b, "--out", tmp + "/b.kp")
        try imprintOK("mls", "add", "--dir", a, "--kp", tmp + "/b.kp", "--commit-out", tmp + "/c.bin", "--welcome-out", tmp + "/w.bin")
        try imprintOK("mls", "join", "--dir", b, "--welcome", tmp + "/w.bin")
        // Eight encrypts at once on one directory: each must take its own ratchet generation.
        let count = 8
        let processes = try (0 ..< count).map { i -> Process in
            let p = Process()
            p.executableURL = URL(fileURLWithPath: try imprintExecutable())
            p.arguments = ["mls", "encrypt", "--dir", a, "--text", "message \(i)", "--out", tmp + "/m\(i).bin"]
            try p.run()
            return p
        }
        for p in processes { p.waitUntilExit(); #expect(p.terminationStatus == 0) }
        var seen = Set<String>()
        for i in 0 ..< count {
            let r = try imprintArgs(["mls", "process", "--dir", b, "--msg", tmp + "/m\(i).bin"])
            #expect(r.status == 0, "message \(i): \(r.stderr)")
            seen.insert(String(decoding: r.stdout, as: UTF8.self))
        }
        #expect(seen == Set((0 ..< count).map { "message \($0)" }))
        let members = try #require(try JSONSerialization.jsonObject(with: Data(try imprintOK("mls", "members", "--dir", b, "--json").stdout)) as? [String: Any])
        #expect((members["members"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["a", "b"])
    }
}

/// `imprint-bench mls --json` keeps the benchmark contract's keys and checks its own work.
@Suite("imprint-bench mls")
struct MLSBenchContractTests {
    @Test("prints one JSON object with the contract keys")
    func jsonShape() throws {
        let bench = (try imprintExecutable() as NSString).deletingLastPathComponent + "/imprint-bench"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: bench)
        p.arguments = ["mls", "--members", "3", "--runs", "1", "--messages", "20", "--json"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        for key in ["members", "commit_ms", "process_ms", "join_ms", "commit_bytes", "welcome_bytes", "encrypt_per_s", "decrypt_per_s", "decrypt_batch_per_s"] {
            #expect(object[key] is NSNumber, "missing \(key)")
        }
        #expect(object["members"] as? Int == 3)
        #expect((object["commit_bytes"] as? Int ?? 0) > 0 && (object["welcome_bytes"] as? Int ?? 0) > 0)
    }
}

/// The key store an `imprint mls --dir` peer keeps its state in (docs/keys.md).
func cliKeyStore(_ dir: String) throws -> SQLiteKeyStore {
    try SQLiteKeyStore(path: dir + "/keys.sqlite", unlock: .keyFile(path: dir + "/keys.key"))
}
