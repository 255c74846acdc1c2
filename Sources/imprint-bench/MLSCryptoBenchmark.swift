import ArgumentParser
import Crypto
import Foundation
import ImprintEd25519

/// `imprint-bench mls-crypto`: the cost of the swift-crypto (BoringSSL)
/// primitives under an MLS message, each in isolation, in microseconds per
/// operation (median of `--runs` batches). These bound what `imprint-bench mls`
/// can reach: every application message is one Ed25519 signature to send and
/// one Ed25519 verification to receive.
struct MLSCryptoBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "mls-crypto", abstract: "Per-operation cost of the crypto primitives under MLS (suite 1).")

    @Option(help: "Operations per batch.") var iterations = 2000
    @Option(help: "Batches (medians are reported).") var runs = 5
    @Flag(help: "Print one JSON object.") var json = false

    func validate() throws {
        guard iterations >= 1, runs >= 1 else { throw ValidationError("--iterations and --runs must be >= 1") }
    }

    func run() throws {
        let message = [UInt8](repeating: 0x5a, count: 1024 + 100)
        let signingKey = Curve25519.Signing.PrivateKey()
        let seed = signingKey.rawRepresentation
        let signature = try signingKey.signature(for: message)
        let verifyingKey = signingKey.publicKey
        guard let preparedKey = Ed25519VerifyingKey(rawRepresentation: [UInt8](verifyingKey.rawRepresentation)) else {
            throw ValidationError("could not prepare the Ed25519 key")
        }
        let agreementKey = Curve25519.KeyAgreement.PrivateKey()
        let peer = Curve25519.KeyAgreement.PrivateKey().publicKey
        let aesKey = SymmetricKey(size: .bits128)
        let nonce = AES.GCM.Nonce()
        let sealed = try AES.GCM.seal(message[..<1024], using: aesKey, nonce: nonce)
        let prk = SymmetricKey(size: .bits256)
        let keyed = HMAC<SHA256>(key: prk)

        var sink = 0
        func perOp(_ body: () throws -> Int) rethrows -> Double {
            var samples: [Double] = []
            for _ in 0 ..< runs {
                let (ms, n) = try Clock.measure { () throws -> Int in
                    var s = 0
                    for _ in 0 ..< iterations { s &+= try body() }
                    return s
                }
                sink &+= n
                samples.append(ms * 1000 / Double(iterations))
            }
            return Clock.median(samples)
        }
        let results: [(String, Double)] = [
            ("ed25519_sign_us", try perOp { try signingKey.signature(for: message).count }),
            ("ed25519_sign_from_seed_us", try perOp { try Curve25519.Signing.PrivateKey(rawRepresentation: seed).signature(for: message).count }),
            ("ed25519_verify_us", perOp { verifyingKey.isValidSignature(signature, for: message) ? 1 : 0 }),
            ("ed25519_verify_prepared_us", perOp { preparedKey.isValidSignature(signature, for: message) ? 1 : 0 }),
            ("ed25519_prepare_key_us", perOp { Ed25519VerifyingKey(rawRepresentation: preparedKey.rawRepresentation)?.rawRepresentation.count ?? 0 }),
            ("x25519_keygen_us", perOp { Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation.count }),
            ("x25519_dh_us", try perOp { try agreementKey.sharedSecretFromKeyAgreement(with: peer).withUnsafeBytes { $0.count } }),
            ("aes128gcm_seal_1kib_us", try perOp { try AES.GCM.seal(message[..<1024], using: aesKey, nonce: nonce).ciphertext.count }),
            ("aes128gcm_open_1kib_us", try perOp { try AES.GCM.open(sealed, using: aesKey).count }),
            ("hkdf_expand_32_us", perOp { HKDF<SHA256>.expand(pseudoRandomKey: prk, info: message[..<40], outputByteCount: 32).bitCount }),
            ("hmac_sha256_us", perOp { HMAC<SHA256>.authenticationCode(for: message[..<40], using: prk).withUnsafeBytes { Int($0[0]) } }),
            ("hmac_sha256_prekeyed_us", perOp {
                var h = keyed
                h.update(data: message[..<40])
                return h.finalize().withUnsafeBytes { Int($0[0]) }
            }),
            ("sha512_1kib_us", perOp { SHA512.hash(data: message[..<1024]).withUnsafeBytes { Int($0[0]) } }),
        ]
        let lines = results.map { ($0.0, String(format: "%.2f", $0.1)) } + [("iterations", "\(iterations)"), ("runs", "\(runs)"), ("checksum", "\(sink & 1)")]
        if json {
            print("{" + lines.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            for (k, v) in lines { print("\(k.padding(toLength: 28, withPad: " ", startingAt: 0)) \(v)") }
        }
    }
}
