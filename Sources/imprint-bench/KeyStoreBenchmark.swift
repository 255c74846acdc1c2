import ArgumentParser
import Foundation
import ImprintKeys
import ImprintMLS

/// `imprint-bench keys`: what a command pays for the key store before it can decrypt: open
/// the store (unlock the master key) and read one convo's MLS group state, then restore the
/// group from it. The state is a real group's (`--members` members, made with ImprintMLS),
/// in a store that also holds `--convos` other groups, as a busy home would.
/// - key file unlock (the default home): open + read, and open + read + `MLSGroup` restore;
/// - passphrase unlock (scrypt, OWASP's N = 2^17, r = 8, p = 1): open + read, fewer runs,
///   since scrypt is meant to take this long;
/// - a group state save (one transaction with its cursor, `synchronous = FULL`).
/// Medians over `--runs`; every open is a fresh `SQLiteKeyStore` on the same files.
struct KeyStoreBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Key store: open + read of a group state (key file and passphrase), save.")

    @Option(help: "Members of the group whose state is read.") var members = 50
    @Option(help: "Other groups in the store.") var convos = 100
    @Option(help: "Runs for the key-file store (medians are reported).") var runs = 50
    @Option(help: "Runs for the passphrase store.") var passphraseRuns = 5
    @Flag(help: "Print one JSON object.") var json = false

    func run() async throws {
        let directory = NSTemporaryDirectory() + "imprint-bench-keys-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = try Self.groupState(members: members)

        let keyFileSource = MasterKeySource.keyFile(path: directory + "/master.key")
        let passphraseSource = MasterKeySource.passphrase("correct horse battery staple", parameters: .owasp)
        let keyFilePath = directory + "/keyfile.sqlite", passphrasePath = directory + "/passphrase.sqlite"
        var saveTimes: [Double] = []
        for (path, source) in [(keyFilePath, keyFileSource), (passphrasePath, passphraseSource)] {
            let store = try SQLiteKeyStore(path: path, unlock: source)
            let me = try store.deviceIdentity().did
            for convo in 0..<convos {
                try store.saveGroupState(GroupStateRecord(state: state, cursor: ProcessedCursor(epoch: 3, seq: 40)), convo: "other-\(convo)", for: me)
            }
            for seq in 0..<(path == keyFilePath ? runs : 1) {
                let (ms, _) = try Clock.measure {
                    try store.saveGroupState(GroupStateRecord(state: state, cursor: ProcessedCursor(epoch: 3, seq: UInt64(41 + seq))), convo: "read-me", for: me)
                }
                saveTimes.append(ms)
            }
        }

        func openAndRead(_ path: String, _ source: MasterKeySource, restore: Bool) throws -> Double {
            try Clock.measure {
                let store = try SQLiteKeyStore(path: path, unlock: source)
                let me = try store.deviceIdentity().did
                guard let record = try store.groupState(convo: "read-me", for: me), record.state == state else {
                    throw ValidationError("the group state did not read back")
                }
                if restore { _ = try MLSGroup(serializedState: record.state) }
            }.0
        }
        let keyFileOpen = try (0..<runs).map { _ in try openAndRead(keyFilePath, keyFileSource, restore: false) }
        let keyFileRestore = try (0..<runs).map { _ in try openAndRead(keyFilePath, keyFileSource, restore: true) }
        let passphraseOpen = try (0..<passphraseRuns).map { _ in try openAndRead(passphrasePath, passphraseSource, restore: false) }
        let storeBytes = (try? FileManager.default.attributesOfItem(atPath: keyFilePath)[.size] as? Int) ?? 0

        let fields: [(String, String)] = [
            ("members", "\(members)"), ("group_state_bytes", "\(state.count)"), ("groups_in_store", "\(convos + 1)"),
            ("store_bytes", "\(storeBytes)"), ("runs", "\(runs)"), ("passphrase_runs", "\(passphraseRuns)"),
            ("keyfile_open_read_ms", Clock.format(Clock.median(keyFileOpen))),
            ("keyfile_open_read_restore_ms", Clock.format(Clock.median(keyFileRestore))),
            ("passphrase_open_read_ms", Clock.format(Clock.median(passphraseOpen))),
            ("save_group_state_ms", Clock.format(Clock.median(saveTimes))),
            ("load_avg_1m", Clock.format(SystemLoad.oneMinute())),
        ]
        if json {
            print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
        } else {
            for (key, value) in fields { print("\(key.padding(toLength: 30, withPad: " ", startingAt: 0)) \(value)") }
        }
    }

    /// The serialized state of a real group of `members` (the creator's view after one commit
    /// that added everyone else).
    static func groupState(members: Int) throws -> [UInt8] {
        let suite = CipherSuite.x25519Aes128GcmSha256Ed25519
        func identity(_ name: String) throws -> (Credential, [UInt8]) {
            (.basic(identity: Array(name.utf8)), try suite.generateSignatureKeyPair().privateKey)
        }
        let (credential, key) = try identity("creator")
        var group = try MLSGroup.create(suite: suite, groupID: Array("imprint-bench keys".utf8), credential: credential, signaturePrivateKey: key)
        let joiners = try (1..<max(2, members)).map { index in
            let (credential, key) = try identity("member-\(index)")
            return try KeyPackage.create(suite: suite, credential: credential, signaturePrivateKey: key).0
        }
        _ = try group.commit(joiners.map { .add($0) })
        return group.serializedState()
    }
}
