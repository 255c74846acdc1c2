// Child process for ImprintKeysTests:
//   save-until-killed <store> <key file>   saves group state + cursor n = 1, 2, … for ever,
//                                          printing "saved n" after each save returns
//   device-identity <store> <key file>     opens (or creates) the store, prints its device did
//   make-fixture <store>                   writes the schema-v1 sample store the migration
//                                          test reads (run once; the result is committed)
import Crypto
import Foundation
import ImprintKeys

/// The group state saved with cursor seq `n` (sizes vary so saves touch 1 to 6 pages).
func crashState(_ n: UInt64) -> [UInt8] {
    Array("state \(n):".utf8) + [UInt8](repeating: UInt8(truncatingIfNeeded: n % 251), count: 500 + Int((n &* 977) % 20_000))
}

func crashCursor(_ n: UInt64) -> ProcessedCursor { ProcessedCursor(epoch: n / 3, seq: n) }

let arguments = CommandLine.arguments
do {
    switch arguments.count > 1 ? arguments[1] : "" {
    case "save-until-killed" where arguments.count == 4:
        let store = try SQLiteKeyStore(path: arguments[2], unlock: .keyFile(path: arguments[3]))
        let me = try store.deviceIdentity().did
        var n = (try store.groupState(convo: "crash", for: me)?.cursor.seq ?? 0) + 1
        while true {
            try store.saveGroupState(GroupStateRecord(state: crashState(n), cursor: crashCursor(n)), convo: "crash", for: me)
            FileHandle.standardOutput.write(Data("saved \(n)\n".utf8))
            n += 1
        }
    case "device-identity" where arguments.count == 4:
        let store = try SQLiteKeyStore(path: arguments[2], unlock: .keyFile(path: arguments[3]))
        print(try store.deviceIdentity().did.did)
    case "make-fixture" where arguments.count == 3:
        let store = try SQLiteKeyStore(path: arguments[2], unlock: .passphrase("imprint fixture", parameters: .testing))
        let identity = DeviceIdentity(signingKey: try Curve25519.Signing.PrivateKey(rawRepresentation: (1...32).map { UInt8($0) }))
        try store.saveIdentity(identity)
        let me = identity.did
        try store.saveSignatureKey(SignatureKey(suite: 1, publicKey: [UInt8](repeating: 2, count: 32),
                                                privateKey: [UInt8](repeating: 3, count: 32), credential: Array("fixture".utf8)), for: me)
        try store.saveKeyPackagePrivateKey(Array("kp secret".utf8), reference: [UInt8](repeating: 0xAB, count: 32), for: me)
        try store.saveGroupState(GroupStateRecord(state: Array("fixture group state v1".utf8), cursor: ProcessedCursor(epoch: 7, seq: 42)),
                                 convo: "fixture-convo", for: me)
        try store.saveEpochSecret([UInt8](repeating: 7, count: 32), convo: "fixture-convo", epoch: 7, for: me)
        print(me.did)
    default:
        FileHandle.standardError.write(Data("usage: imprint-keys-testhelper save-until-killed <store> <key file> | device-identity <store> <key file> | make-fixture <store>\n".utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("imprint-keys-testhelper: \(error)\n".utf8))
    exit(1)
}
