import ArgumentParser
import Foundation
import ImprintMLS

/// `imprint-bench mls --members N`: the MLS membership and messaging workload,
/// the same as `Benchmarks/peers/mls_peer_bench.py` runs through mls-rs.
///
/// Cipher suite 1, basic credentials, ratchet tree in the Welcome. Per run
/// (fresh keys every run; medians over `--runs`):
/// - setup (untimed): a creator makes a group and adds a receiver (one commit);
///   the receiver joins; N fresh members each make a KeyPackage.
/// - `commit_ms`: the creator builds one commit adding all N (applied locally at once).
/// - `process_ms`: the receiver, an existing member, processes that commit.
/// - `join_ms`: one of the N joins from the single Welcome.
/// - `commit_bytes` / `welcome_bytes`: wire-format MLSMessage sizes.
/// - `encrypt_per_s` / `decrypt_per_s`: the creator encrypts `--messages` 1 KiB
///   application messages; the receiver decrypts them in order, one `process`
///   call each.
/// - `decrypt_batch_per_s` (an extension of the contract): the joined member
///   decrypts the same messages with one `process(batch:)` call, as a client
///   catching up on its mailbox would (signatures checked on every core).
///
/// Messages are handed over as decoded `MLSMessage` values, as the peer bench
/// hands mls-rs its decoded `Message` objects; `--wire` also times encoding
/// them to bytes and decoding them (commit, Welcome, every application message).
struct MLSBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "mls", abstract: "MLS: add N members in one commit, process, join, 1 KiB messages.")

    @Option(help: "Members added by the one measured commit.") var members: Int
    @Option(help: "Runs (medians are reported).") var runs = 3
    @Option(help: "1 KiB application messages per run.") var messages = 2000
    @Flag(help: "Print one JSON object.") var json = false
    @Flag(help: "Also time wire encoding and decoding of the messages.") var wire = false

    /// Failures of a run: the benchmark checks what it measures.
    struct BenchmarkError: Error, CustomStringConvertible {
        let description: String
    }

    struct Run {
        var commitMs = 0.0, processMs = 0.0, joinMs = 0.0
        var commitBytes = 0, welcomeBytes = 0
        var encryptPerS = 0.0, decryptPerS = 0.0, decryptBatchPerS = 0.0
    }

    func validate() throws {
        guard members >= 1, runs >= 1, messages >= 1 else { throw ValidationError("--members, --runs and --messages must be >= 1") }
    }

    func run() throws {
        var results: [Run] = []
        for _ in 0 ..< runs { results.append(try oneRun()) }
        func med(_ key: KeyPath<Run, Double>) -> String { Clock.format(Clock.median(results.map { $0[keyPath: key] })) }
        func medInt(_ key: KeyPath<Run, Int>) -> String { "\(Int(Clock.median(results.map { Double($0[keyPath: key]) })))" }
        func rate(_ key: KeyPath<Run, Double>) -> String { String(format: "%.1f", Clock.median(results.map { $0[keyPath: key] })) }
        let result: [(String, String)] = [
            ("members", "\(members)"),
            ("commit_ms", med(\.commitMs)),
            ("process_ms", med(\.processMs)),
            ("join_ms", med(\.joinMs)),
            ("commit_bytes", medInt(\.commitBytes)),
            ("welcome_bytes", medInt(\.welcomeBytes)),
            ("encrypt_per_s", rate(\.encryptPerS)),
            ("decrypt_per_s", rate(\.decryptPerS)),
            ("decrypt_batch_per_s", rate(\.decryptBatchPerS)),
            ("cipher_suite", "1"),
            ("runs", "\(runs)"),
            ("messages", "\(messages)"),
            ("wire", "\(wire)"),
        ]
        if json {
            print("{" + result.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            for (k, v) in result { print("\(k.padding(toLength: 16, withPad: " ", startingAt: 0)) \(v)") }
        }
    }

    private func identity(_ name: String) throws -> (Credential, [UInt8]) {
        (.basic(identity: Array(name.utf8)), try CipherSuite.x25519Aes128GcmSha256Ed25519.generateSignatureKeyPair().privateKey)
    }

    private func oneRun() throws -> Run {
        let suite = CipherSuite.x25519Aes128GcmSha256Ed25519
        let (creatorCred, creatorKey) = try identity("creator")
        var group = try MLSGroup.create(suite: suite, groupID: Array("imprint-bench mls".utf8), credential: creatorCred, signaturePrivateKey: creatorKey)
        let (receiverCred, receiverKey) = try identity("receiver")
        let (rkp, rkeys) = try KeyPackage.create(suite: suite, credential: receiverCred, signaturePrivateKey: receiverKey)
        let setup = try group.commit([.add(rkp)])
        guard let setupWelcome = setup.welcome else { throw BenchmarkError(description: "setup commit made no Welcome") }
        var receiver = try MLSGroup.join(welcome: setupWelcome, keyPackage: rkp, privateKeys: rkeys)

        var joiners: [(KeyPackage, KeyPackagePrivateKeys)] = []
        for i in 0 ..< members {
            let (cred, key) = try identity("member-\(i)")
            joiners.append(try KeyPackage.create(suite: suite, credential: cred, signaturePrivateKey: key))
        }

        var run = Run()
        let (commitMs, output) = try Clock.measure { try group.commit(joiners.map { .add($0.0) }) }
        guard let welcome = output.welcome else { throw BenchmarkError(description: "commit made no Welcome") }
        let commitWire = output.commit.tlsBytes
        let (processMs, processed) = try Clock.measure { try receiver.process(wire ? try MLSMessage(tlsBytes: commitWire) : output.commit) }
        guard processed == .commit(epoch: group.epoch) else { throw BenchmarkError(description: "receiver did not apply the commit") }
        let welcomeWire = MLSMessage.welcome(welcome).tlsBytes
        let last = joiners[joiners.count - 1]
        var (joinMs, joined) = try Clock.measure { () throws -> MLSGroup in
            var w = welcome
            if wire {
                guard case let .welcome(decoded) = try MLSMessage(tlsBytes: welcomeWire) else { throw BenchmarkError(description: "not a Welcome") }
                w = decoded
            }
            return try MLSGroup.join(welcome: w, keyPackage: last.0, privateKeys: last.1)
        }
        run.commitMs = commitMs
        run.processMs = processMs
        run.joinMs = joinMs
        run.commitBytes = commitWire.count
        run.welcomeBytes = welcomeWire.count

        var rng = SystemRandomNumberGenerator()
        let payload = (0 ..< 1024).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
        var ciphertexts: [MLSMessage] = [], encodedCiphertexts: [[UInt8]] = []
        let (encMs, _) = try Clock.measure {
            if wire {
                encodedCiphertexts = try (0 ..< messages).map { _ in try group.encrypt(payload).tlsBytes }
            } else {
                ciphertexts = try (0 ..< messages).map { _ in try group.encrypt(payload) }
            }
        }
        let (decMs, plaintexts) = try Clock.measure {
            try (0 ..< messages).map { i -> [UInt8] in
                let m = wire ? try MLSMessage(tlsBytes: encodedCiphertexts[i]) : ciphertexts[i]
                guard case let .application(data, _, _) = try receiver.process(m) else {
                    throw BenchmarkError(description: "not an application message")
                }
                return data
            }
        }
        guard plaintexts.allSatisfy({ $0 == payload }) else { throw BenchmarkError(description: "decrypted payload differs") }
        let (batchMs, batch) = try Clock.measure {
            joined.process(batch: wire ? try encodedCiphertexts.map { try MLSMessage(tlsBytes: $0) } : ciphertexts)
        }
        guard batch.count == messages, try batch.allSatisfy({
            guard case let .application(data, _, _) = try $0.get() else { return false }
            return data == payload
        }) else { throw BenchmarkError(description: "batch decryption differs") }
        let probe = try group.exportSecret(label: "bench", context: [], length: 32)
        guard try joined.exportSecret(label: "bench", context: [], length: 32) == probe,
              try receiver.exportSecret(label: "bench", context: [], length: 32) == probe
        else { throw BenchmarkError(description: "members disagree on the exporter secret") }
        run.encryptPerS = Double(messages) / (encMs / 1000)
        run.decryptPerS = Double(messages) / (decMs / 1000)
        run.decryptBatchPerS = Double(messages) / (batchMs / 1000)
        return run
    }
}
