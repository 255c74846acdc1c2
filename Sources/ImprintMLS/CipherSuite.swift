import Crypto
import ImprintEd25519
import Foundation

/// An MLS cipher suite (RFC 9420 §17.1).
///
/// Suites 1, 2 and 3 are implemented. Other registered values can be
/// represented (so messages naming them decode) but ``isSupported`` is false
/// and every cryptographic operation throws ``MLSError/Code/unsupportedCipherSuite``.
public struct CipherSuite: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// MLS_128_DHKEMX25519_AES128GCM_SHA256_Ed25519 (mandatory to implement).
    public static let x25519Aes128GcmSha256Ed25519 = CipherSuite(rawValue: 1)
    /// MLS_128_DHKEMP256_AES128GCM_SHA256_P256.
    public static let p256Aes128GcmSha256P256 = CipherSuite(rawValue: 2)
    /// MLS_128_DHKEMX25519_CHACHA20POLY1305_SHA256_Ed25519.
    public static let x25519ChaCha20Poly1305Sha256Ed25519 = CipherSuite(rawValue: 3)

    /// True for the suites this implementation supports (1, 2, 3).
    public var isSupported: Bool { (1 ... 3).contains(rawValue) }

    public var description: String { "CipherSuite(\(rawValue))" }

    func requireSupported() throws {
        guard isSupported else { throw MLSError(.unsupportedCipherSuite, "cipher suite \(rawValue)") }
    }

    // MARK: Sizes

    /// Output size of the hash / KDF (Nh).
    public var hashLength: Int { 32 }
    /// AEAD key length (Nk).
    public var aeadKeyLength: Int { rawValue == 3 ? 32 : 16 }
    /// AEAD nonce length (Nn).
    public var aeadNonceLength: Int { 12 }
    /// Length of an encoded HPKE public key (Npk).
    var hpkePublicKeyLength: Int { rawValue == 2 ? 65 : 32 }

    // MARK: Hash and KDF

    func hash(_ data: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: data)) }

    func mac(key: [UInt8], data: [UInt8]) -> [UInt8] {
        KeyedHMAC(key: key).authenticationCode(data)
    }

    /// HKDF-Extract (RFC 5869 §2.2): HMAC(salt, ikm).
    func extract(salt: [UInt8], ikm: [UInt8]) -> [UInt8] {
        mac(key: salt, data: ikm)
    }

    /// HKDF-Expand (RFC 5869 §2.3). Outputs of at most one hash length (every
    /// MLS key, nonce and secret) are the first block, T(1) = HMAC(prk, info || 0x01),
    /// computed directly.
    func expand(prk: [UInt8], info: [UInt8], length: Int) -> [UInt8] {
        guard length <= hashLength else {
            return HKDF<SHA256>.expand(pseudoRandomKey: SymmetricKey(data: prk), info: info, outputByteCount: length)
                .withUnsafeBytes { Array($0) }
        }
        return KeyedHMAC(key: prk).expandFirstBlock(info: info, length: length)
    }

    // MARK: Labelled primitives (RFC 9420 §5)

    static let labelPrefix = Array("MLS 1.0 ".utf8)

    /// RefHash(label, value) = Hash(RefHashInput).
    public func refHash(label: [UInt8], value: [UInt8]) throws -> [UInt8] {
        try requireSupported()
        var w = TLSWriter()
        w.writeOpaque(label)
        w.writeOpaque(value)
        return hash(w.bytes)
    }

    /// ExpandWithLabel(secret, label, context, length).
    public func expandWithLabel(secret: [UInt8], label: String, context: [UInt8], length: Int) throws -> [UInt8] {
        try expandWithLabel(secret: secret, label: Array(label.utf8), context: context, length: length)
    }

    /// ExpandWithLabel with a label given as raw bytes (labels need not be UTF-8).
    public func expandWithLabel(secret: [UInt8], label: [UInt8], context: [UInt8], length: Int) throws -> [UInt8] {
        try requireSupported()
        guard length >= 0, length <= 255 * hashLength, length <= Int(UInt16.max) else {
            throw MLSError(.lengthOverflow, "expand length \(length)")
        }
        return expand(prk: secret, info: CipherSuite.kdfLabel(length: length, label: label, context: context), length: length)
    }

    /// ExpandWithLabel from a secret already keyed for HMAC, for outputs of at
    /// most one hash length (keys, nonces, secrets).
    func expandWithLabel(keyed: KeyedHMAC, label: [UInt8], context: [UInt8], length: Int) -> [UInt8] {
        keyed.expandFirstBlock(info: CipherSuite.kdfLabel(length: length, label: label, context: context), length: length)
    }

    /// The encoded KDFLabel {length, "MLS 1.0 " + label, context}.
    static func kdfLabel(length: Int, label: [UInt8], context: [UInt8]) -> [UInt8] {
        var w = TLSWriter(capacity: 2 + 2 + labelPrefix.count + label.count + 4 + context.count)
        w.writeUInt16(UInt16(length))
        w.writeVarint(labelPrefix.count + label.count)
        w.writeBytes(labelPrefix)
        w.writeBytes(label)
        w.writeOpaque(context)
        return w.bytes
    }

    /// DeriveSecret(secret, label) = ExpandWithLabel(secret, label, "", Nh).
    public func deriveSecret(secret: [UInt8], label: String) throws -> [UInt8] {
        try expandWithLabel(secret: secret, label: label, context: [], length: hashLength)
    }

    /// DeriveTreeSecret(secret, label, generation, length).
    public func deriveTreeSecret(secret: [UInt8], label: String, generation: UInt32, length: Int) throws -> [UInt8] {
        var w = TLSWriter()
        w.writeUInt32(generation)
        return try expandWithLabel(secret: secret, label: label, context: w.bytes, length: length)
    }

    static func signContent(label: String, content: [UInt8]) -> [UInt8] {
        var w = TLSWriter()
        w.writeOpaque(labelPrefix + Array(label.utf8))
        w.writeOpaque(content)
        return w.bytes
    }

    /// SignWithLabel(SignatureKey, Label, Content).
    public func signWithLabel(privateKey: [UInt8], label: String, content: [UInt8]) throws -> [UInt8] {
        try signWithLabel(signer: SignatureSigner(suite: self, privateKey: privateKey), label: label, content: content)
    }

    /// SignWithLabel with a prepared signer.
    func signWithLabel(signer: SignatureSigner, label: String, content: [UInt8]) throws -> [UInt8] {
        try signer.sign(CipherSuite.signContent(label: label, content: content))
    }

    /// VerifyWithLabel(VerificationKey, Label, Content, Signature).
    public func verifyWithLabel(publicKey: [UInt8], label: String, content: [UInt8], signature: [UInt8]) throws -> Bool {
        try verify(publicKey: publicKey, message: CipherSuite.signContent(label: label, content: content), signature: signature)
    }

    /// VerifyWithLabel for a key that signs again and again (a member's, on FramedContent).
    /// Ed25519 keys seen more than once are then prepared for fast verification
    /// (`Ed25519SignatureVerifier`); the answer is the same as `verifyWithLabel`'s.
    func verifyWithLabel(repeatedSigner publicKey: [UInt8], label: String, content: [UInt8], signature: [UInt8]) throws -> Bool {
        try verify(publicKey: publicKey, message: CipherSuite.signContent(label: label, content: content), signature: signature, signerRepeats: true)
    }

    static func encryptContext(label: String, context: [UInt8]) -> [UInt8] {
        var w = TLSWriter()
        w.writeOpaque(labelPrefix + Array(label.utf8))
        w.writeOpaque(context)
        return w.bytes
    }

    /// EncryptWithLabel: HPKE base-mode seal to `publicKey`; returns (kem_output, ciphertext).
    public func encryptWithLabel(publicKey: [UInt8], label: String, context: [UInt8], plaintext: [UInt8]) throws -> (kemOutput: [UInt8], ciphertext: [UInt8]) {
        try hpkeSeal(publicKey: publicKey, info: CipherSuite.encryptContext(label: label, context: context), aad: [], plaintext: plaintext)
    }

    /// DecryptWithLabel: HPKE base-mode open with `privateKey`.
    public func decryptWithLabel(privateKey: [UInt8], label: String, context: [UInt8], kemOutput: [UInt8], ciphertext: [UInt8]) throws -> [UInt8] {
        try hpkeOpen(privateKey: privateKey, info: CipherSuite.encryptContext(label: label, context: context), aad: [], kemOutput: kemOutput, ciphertext: ciphertext)
    }

    // MARK: AEAD

    func aeadSeal(key: [UInt8], nonce: [UInt8], aad: [UInt8], plaintext: [UInt8]) throws -> [UInt8] {
        try requireSupported()
        guard key.count == aeadKeyLength, nonce.count == aeadNonceLength else { throw MLSError(.invalidKey, "AEAD key/nonce size") }
        do {
            if rawValue == 3 {
                let box = try ChaChaPoly.seal(plaintext, using: SymmetricKey(data: key), nonce: ChaChaPoly.Nonce(data: nonce), authenticating: aad)
                return Array(box.ciphertext) + Array(box.tag)
            } else {
                let box = try AES.GCM.seal(plaintext, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: nonce), authenticating: aad)
                return Array(box.ciphertext) + Array(box.tag)
            }
        } catch {
            throw MLSError(.cryptoFailure, "AEAD seal: \(error)")
        }
    }

    func aeadOpen(key: [UInt8], nonce: [UInt8], aad: [UInt8], ciphertext: [UInt8]) throws -> [UInt8] {
        try requireSupported()
        guard key.count == aeadKeyLength, nonce.count == aeadNonceLength else { throw MLSError(.invalidKey, "AEAD key/nonce size") }
        guard ciphertext.count >= 16 else { throw MLSError(.decryptionFailed, "ciphertext shorter than tag") }
        let body = ciphertext[..<(ciphertext.count - 16)]
        let tag = ciphertext[(ciphertext.count - 16)...]
        do {
            if rawValue == 3 {
                let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: body, tag: tag)
                return Array(try ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: aad))
            } else {
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: body, tag: tag)
                return Array(try AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: aad))
            }
        } catch {
            throw MLSError(.decryptionFailed, "AEAD open")
        }
    }

    // MARK: HPKE

    func hpkeSeal(publicKey: [UInt8], info: [UInt8], aad: [UInt8], plaintext: [UInt8]) throws -> (kemOutput: [UInt8], ciphertext: [UInt8]) {
        try HPKEBaseMode(suite: self, info: info).seal(publicKey: publicKey, aad: aad, plaintext: plaintext)
    }

    func hpkeOpen(privateKey: [UInt8], info: [UInt8], aad: [UInt8], kemOutput: [UInt8], ciphertext: [UInt8]) throws -> [UInt8] {
        try HPKEBaseMode(suite: self, info: info).open(privateKey: privateKey, kemOutput: kemOutput, aad: aad, ciphertext: ciphertext)
    }

    /// The HPKE public key for an HPKE private key.
    public func hpkePublicKey(privateKey: [UInt8]) throws -> [UInt8] {
        try requireSupported()
        do {
            if rawValue == 2 {
                return Array(try P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey).publicKey.x963Representation)
            }
            return Array(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey).publicKey.rawRepresentation)
        } catch {
            throw MLSError(.invalidKey, "HPKE private key")
        }
    }

    /// HPKE DeriveKeyPair (RFC 9180 §7.1.3) for the suite's KEM; returns (private, public).
    public func deriveKeyPair(ikm: [UInt8]) throws -> (privateKey: [UInt8], publicKey: [UInt8]) {
        try requireSupported()
        let kemID: UInt16 = rawValue == 2 ? 0x0010 : 0x0020
        let suiteID = Array("KEM".utf8) + [UInt8(kemID >> 8), UInt8(kemID & 0xff)]
        let v1 = Array("HPKE-v1".utf8)
        func labeledExtract(_ salt: [UInt8], _ label: String, _ ikm: [UInt8]) -> [UInt8] {
            extract(salt: salt, ikm: v1 + suiteID + Array(label.utf8) + ikm)
        }
        func labeledExpand(_ prk: [UInt8], _ label: String, _ info: [UInt8], _ len: Int) -> [UInt8] {
            expand(prk: prk, info: [UInt8(len >> 8), UInt8(len & 0xff)] + v1 + suiteID + Array(label.utf8) + info, length: len)
        }
        let dkpPrk = labeledExtract([], "dkp_prk", ikm)
        if rawValue != 2 {
            let sk = labeledExpand(dkpPrk, "sk", [], 32)
            return (sk, try hpkePublicKey(privateKey: sk))
        }
        // P-256: rejection sampling against the group order.
        let order: [UInt8] = [0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                              0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51]
        for counter in 0 ... 255 {
            let candidate = labeledExpand(dkpPrk, "candidate", [UInt8(counter)], 32)
            if candidate.allSatisfy({ $0 == 0 }) { continue }
            if !candidate.lexicographicallyPrecedes(order) { continue }
            return (candidate, try hpkePublicKey(privateKey: candidate))
        }
        throw MLSError(.cryptoFailure, "DeriveKeyPair exhausted")
    }

    // MARK: Signatures

    func verify(publicKey: [UInt8], message: [UInt8], signature: [UInt8], signerRepeats: Bool = false) throws -> Bool {
        try requireSupported()
        if rawValue == 2 {
            guard let pk = try? P256.Signing.PublicKey(x963Representation: publicKey) else { return false }
            guard let sig = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return pk.isValidSignature(sig, for: message)
        }
        if signerRepeats {
            // Senders sign many messages with one key: the shared verifier prepares a key on its
            // second use and then verifies in about a third of the time (same answers).
            return Ed25519SignatureVerifier.shared.isValidSignature(signature, for: message, publicKey: publicKey)
        }
        // One-off checks (key packages, leaf nodes, group info) would only fill the cache.
        guard let pk = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
        return pk.isValidSignature(signature, for: message)
    }

    /// The signature public key for a signature private key.
    public func signaturePublicKey(privateKey: [UInt8]) throws -> [UInt8] {
        try requireSupported()
        do {
            if rawValue == 2 {
                return Array(try P256.Signing.PrivateKey(rawRepresentation: privateKey).publicKey.x963Representation)
            }
            return Array(try Curve25519.Signing.PrivateKey(rawRepresentation: privateKey).publicKey.rawRepresentation)
        } catch {
            throw MLSError(.invalidKey, "signature private key")
        }
    }

    /// Generates a fresh signature key pair (private, public).
    public func generateSignatureKeyPair() throws -> (privateKey: [UInt8], publicKey: [UInt8]) {
        try requireSupported()
        if rawValue == 2 {
            let sk = try Self.deterministicPrivateKey { try P256.Signing.PrivateKey(rawRepresentation: $0) } ?? P256.Signing.PrivateKey()
            return (Array(sk.rawRepresentation), Array(sk.publicKey.x963Representation))
        }
        let sk = try Self.deterministicPrivateKey { try Curve25519.Signing.PrivateKey(rawRepresentation: $0) }
            ?? Curve25519.Signing.PrivateKey()
        return (Array(sk.rawRepresentation), Array(sk.publicKey.rawRepresentation))
    }

    /// Random bytes from the system CSPRNG (`MLSEntropy`).
    static func randomBytes(_ n: Int) -> [UInt8] {
        MLSEntropy.bytes(n)
    }

    /// Under a test's deterministic `MLSEntropy`, a private key made from 32 of its bytes
    /// (drawn again in the rare case they are not a valid P-256 scalar; any 32 bytes are a
    /// Curve25519 key); nil otherwise, so that the caller uses swift-crypto's own generation.
    static func deterministicPrivateKey<Key>(_ make: ([UInt8]) throws -> Key) throws -> Key? {
        guard MLSEntropy.source != nil else { return nil }
        for _ in 0..<64 {
            if let key = try? make(randomBytes(32)) { return key }
        }
        throw MLSError(.cryptoFailure, "no valid private key from the deterministic source")
    }
}

extension CipherSuite: TLSCodable {
    public init(from reader: inout TLSReader) throws { self.init(rawValue: try reader.readUInt16()) }
    public func encode(to writer: inout TLSWriter) { writer.writeUInt16(rawValue) }
}

extension CipherSuite {
    /// HPKE base-mode receiver export: SetupBaseR(kemOutput, sk, info).Export(context, length).
    func hpkeExport(privateKey: [UInt8], kemOutput: [UInt8], info: [UInt8], exporterContext: [UInt8], length: Int) throws -> [UInt8] {
        try HPKEBaseMode(suite: self, info: info).exportReceiver(privateKey: privateKey, kemOutput: kemOutput, exporterContext: exporterContext, length: length)
    }

    /// HPKE base-mode sender export: returns (kemOutput, exported secret).
    func hpkeExportSender(publicKey: [UInt8], info: [UInt8], exporterContext: [UInt8], length: Int) throws -> (kemOutput: [UInt8], secret: [UInt8]) {
        try HPKEBaseMode(suite: self, info: info).exportSender(publicKey: publicKey, exporterContext: exporterContext, length: length)
    }
}
