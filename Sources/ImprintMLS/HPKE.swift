import Crypto
import Foundation

/// HPKE base mode (RFC 9180) for the supported suites' KEMs (DHKEM(X25519) and
/// DHKEM(P-256), both with HKDF-SHA256), single-shot: one seal or open per
/// key setup (sequence number 0), plus the secret export.
///
/// Built from swift-crypto primitives instead of its `HPKE` type so that the
/// part of the key schedule that depends only on `info` is computed once and
/// reused: a Welcome encrypts to every new member with the same `info`, which
/// embeds the whole encrypted GroupInfo (about 300 KB for 1000 members).
struct HPKEBaseMode: Sendable {
    let suite: CipherSuite
    /// key_schedule_context = mode (0, base) || psk_id_hash || info_hash.
    private let keyScheduleContext: [UInt8]

    private static func kemID(_ suite: CipherSuite) -> UInt16 { suite.rawValue == 2 ? 0x0010 : 0x0020 }
    private static func hpkeSuiteID(_ suite: CipherSuite) -> [UInt8] {
        Array("HPKE".utf8) + be16(kemID(suite)) + be16(0x0001) + be16(suite.rawValue == 3 ? 0x0003 : 0x0001)
    }
    private var kemSuiteID: [UInt8] { Array("KEM".utf8) + be16(HPKEBaseMode.kemID(suite)) }
    private var hpkeSuiteID: [UInt8] { HPKEBaseMode.hpkeSuiteID(suite) }

    /// Prepares the key schedule for `info` (hashed here, once).
    init(suite: CipherSuite, info: [UInt8]) throws {
        try suite.requireSupported()
        self.suite = suite
        let suiteID = HPKEBaseMode.hpkeSuiteID(suite)
        let pskIDHash = HPKEBaseMode.labeledExtract(suite, suiteID, salt: [], label: "psk_id_hash", ikm: [])
        let infoHash = HPKEBaseMode.labeledExtract(suite, suiteID, salt: [], label: "info_hash", ikm: info)
        keyScheduleContext = [0] + pskIDHash + infoHash
    }

    // MARK: Public operations

    /// SetupBaseS(pkR, info) then Seal(aad, plaintext): returns (enc, ciphertext).
    func seal(publicKey: [UInt8], aad: [UInt8], plaintext: [UInt8]) throws -> (kemOutput: [UInt8], ciphertext: [UInt8]) {
        let (shared, enc) = try encapsulate(publicKey)
        let (key, nonce, _) = keySchedule(sharedSecret: shared)
        return (enc, try suite.aeadSeal(key: key, nonce: nonce, aad: aad, plaintext: plaintext))
    }

    /// SetupBaseR(enc, skR, info) then Open(aad, ciphertext).
    func open(privateKey: [UInt8], kemOutput: [UInt8], aad: [UInt8], ciphertext: [UInt8]) throws -> [UInt8] {
        let shared = try decapsulate(kemOutput, privateKey: privateKey)
        let (key, nonce, _) = keySchedule(sharedSecret: shared)
        return try suite.aeadOpen(key: key, nonce: nonce, aad: aad, ciphertext: ciphertext)
    }

    /// SetupBaseS(pkR, info) then Export(exporterContext, length): returns (enc, secret).
    func exportSender(publicKey: [UInt8], exporterContext: [UInt8], length: Int) throws -> (kemOutput: [UInt8], secret: [UInt8]) {
        let (shared, enc) = try encapsulate(publicKey)
        let exporter = keySchedule(sharedSecret: shared).exporterSecret
        return (enc, labeledExpand(hpkeSuiteID, prk: exporter, label: "sec", info: exporterContext, length: length))
    }

    /// SetupBaseR(enc, skR, info) then Export(exporterContext, length).
    func exportReceiver(privateKey: [UInt8], kemOutput: [UInt8], exporterContext: [UInt8], length: Int) throws -> [UInt8] {
        let shared = try decapsulate(kemOutput, privateKey: privateKey)
        let exporter = keySchedule(sharedSecret: shared).exporterSecret
        return labeledExpand(hpkeSuiteID, prk: exporter, label: "sec", info: exporterContext, length: length)
    }

    // MARK: Key schedule (RFC 9180 §5.1)

    private func keySchedule(sharedSecret: [UInt8]) -> (key: [UInt8], nonce: [UInt8], exporterSecret: [UInt8]) {
        let secret = labeledExtract(hpkeSuiteID, salt: sharedSecret, label: "secret", ikm: [])
        return (labeledExpand(hpkeSuiteID, prk: secret, label: "key", info: keyScheduleContext, length: suite.aeadKeyLength),
                labeledExpand(hpkeSuiteID, prk: secret, label: "base_nonce", info: keyScheduleContext, length: suite.aeadNonceLength),
                labeledExpand(hpkeSuiteID, prk: secret, label: "exp", info: keyScheduleContext, length: suite.hashLength))
    }

    // MARK: DHKEM (RFC 9180 §4.1)

    /// Encap(pkR): a fresh ephemeral key pair; returns (shared_secret, enc).
    private func encapsulate(_ publicKey: [UInt8]) throws -> (sharedSecret: [UInt8], enc: [UInt8]) {
        let dh: [UInt8], enc: [UInt8]
        do {
            if suite.rawValue == 2 {
                let pkR = try P256.KeyAgreement.PublicKey(x963Representation: publicKey)
                let skE = try CipherSuite.deterministicPrivateKey { try P256.KeyAgreement.PrivateKey(rawRepresentation: $0) }
                    ?? P256.KeyAgreement.PrivateKey()
                dh = try skE.sharedSecretFromKeyAgreement(with: pkR).withUnsafeBytes { Array($0) }
                enc = Array(skE.publicKey.x963Representation)
            } else {
                let pkR = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey)
                let skE = try CipherSuite.deterministicPrivateKey { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
                    ?? Curve25519.KeyAgreement.PrivateKey()
                dh = try skE.sharedSecretFromKeyAgreement(with: pkR).withUnsafeBytes { Array($0) }
                enc = Array(skE.publicKey.rawRepresentation)
            }
        } catch {
            throw MLSError(.invalidKey, "HPKE encapsulation: \(error)")
        }
        // RFC 9180 §7.1.4: an all-zero X25519 output (a low-order public key) must be rejected.
        guard dh.contains(where: { $0 != 0 }) else { throw MLSError(.invalidKey, "HPKE: low-order public key") }
        return (extractAndExpand(dh: dh, kemContext: enc + publicKey), enc)
    }

    /// Decap(enc, skR): returns shared_secret.
    private func decapsulate(_ enc: [UInt8], privateKey: [UInt8]) throws -> [UInt8] {
        let dh: [UInt8], pkRm: [UInt8]
        do {
            if suite.rawValue == 2 {
                let skR = try P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
                dh = try skR.sharedSecretFromKeyAgreement(with: try P256.KeyAgreement.PublicKey(x963Representation: enc)).withUnsafeBytes { Array($0) }
                pkRm = Array(skR.publicKey.x963Representation)
            } else {
                let skR = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
                dh = try skR.sharedSecretFromKeyAgreement(with: try Curve25519.KeyAgreement.PublicKey(rawRepresentation: enc)).withUnsafeBytes { Array($0) }
                pkRm = Array(skR.publicKey.rawRepresentation)
            }
        } catch {
            throw MLSError(.decryptionFailed, "HPKE decapsulation")
        }
        guard dh.contains(where: { $0 != 0 }) else { throw MLSError(.decryptionFailed, "HPKE: low-order public key") }
        return extractAndExpand(dh: dh, kemContext: enc + pkRm)
    }

    private func extractAndExpand(dh: [UInt8], kemContext: [UInt8]) -> [UInt8] {
        let prk = labeledExtract(kemSuiteID, salt: [], label: "eae_prk", ikm: dh)
        return labeledExpand(kemSuiteID, prk: prk, label: "shared_secret", info: kemContext, length: suite.hashLength)
    }

    // MARK: Labelled HKDF (RFC 9180 §4)

    private static let version = Array("HPKE-v1".utf8)

    private static func labeledExtract(_ suite: CipherSuite, _ suiteID: [UInt8], salt: [UInt8], label: String, ikm: [UInt8]) -> [UInt8] {
        suite.extract(salt: salt, ikm: version + suiteID + Array(label.utf8) + ikm)
    }

    private func labeledExtract(_ suiteID: [UInt8], salt: [UInt8], label: String, ikm: [UInt8]) -> [UInt8] {
        HPKEBaseMode.labeledExtract(suite, suiteID, salt: salt, label: label, ikm: ikm)
    }

    private func labeledExpand(_ suiteID: [UInt8], prk: [UInt8], label: String, info: [UInt8], length: Int) -> [UInt8] {
        suite.expand(prk: prk, info: be16(UInt16(length)) + HPKEBaseMode.version + suiteID + Array(label.utf8) + info, length: length)
    }
}

private func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xff)] }
