import Crypto
import Foundation
import Testing
@testable import ImprintMLS

/// ImprintMLS's own HPKE base mode against swift-crypto's `HPKE`, both ways.
@Suite struct HPKETests {
    static let suites: [CipherSuite] = [.x25519Aes128GcmSha256Ed25519, .p256Aes128GcmSha256P256, .x25519ChaCha20Poly1305Sha256Ed25519]

    static func referenceSuite(_ suite: CipherSuite) -> HPKE.Ciphersuite {
        switch suite.rawValue {
        case 2: HPKE.Ciphersuite(kem: .P256_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_128)
        case 3: HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .chaChaPoly)
        default: HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_128)
        }
    }

    @Test(arguments: suites) func interoperatesWithSwiftCrypto(suite: CipherSuite) throws {
        let (sk, pk) = try suite.deriveKeyPair(ikm: Array(repeating: 3, count: 32))
        let info = Array(repeating: UInt8(0xab), count: 70_000), aad: [UInt8] = [1, 2], plaintext = Array("path secret".utf8)
        let ours = try HPKEBaseMode(suite: suite, info: info)
        let ref = Self.referenceSuite(suite)

        // Ours seals, swift-crypto opens.
        let sealed = try ours.seal(publicKey: pk, aad: aad, plaintext: plaintext)
        var recipient: HPKE.Recipient
        if suite.rawValue == 2 {
            recipient = try HPKE.Recipient(privateKey: try P256.KeyAgreement.PrivateKey(rawRepresentation: sk), ciphersuite: ref,
                                           info: Data(info), encapsulatedKey: Data(sealed.kemOutput))
        } else {
            recipient = try HPKE.Recipient(privateKey: try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: sk), ciphersuite: ref,
                                           info: Data(info), encapsulatedKey: Data(sealed.kemOutput))
        }
        #expect(Array(try recipient.open(sealed.ciphertext, authenticating: aad)) == plaintext)

        // swift-crypto seals and exports, ours opens and exports.
        var sender: HPKE.Sender
        if suite.rawValue == 2 {
            sender = try HPKE.Sender(recipientKey: try P256.KeyAgreement.PublicKey(x963Representation: pk), ciphersuite: ref, info: Data(info))
        } else {
            sender = try HPKE.Sender(recipientKey: try Curve25519.KeyAgreement.PublicKey(rawRepresentation: pk), ciphersuite: ref, info: Data(info))
        }
        let exported = try sender.exportSecret(context: [7], outputByteCount: 32).withUnsafeBytes { Array($0) }
        let ct = Array(try sender.seal(plaintext, authenticating: aad))
        let enc = Array(sender.encapsulatedKey)
        #expect(try ours.open(privateKey: sk, kemOutput: enc, aad: aad, ciphertext: ct) == plaintext)
        #expect(try ours.exportReceiver(privateKey: sk, kemOutput: enc, exporterContext: [7], length: 32) == exported)
        #expect { try ours.open(privateKey: sk, kemOutput: enc, aad: [9], ciphertext: ct) } throws: { ($0 as? MLSError)?.code == .decryptionFailed }

        // Ours exports as sender, swift-crypto as receiver.
        let (kemOutput, secret) = try ours.exportSender(publicKey: pk, exporterContext: [5], length: 32)
        if suite.rawValue == 2 {
            recipient = try HPKE.Recipient(privateKey: try P256.KeyAgreement.PrivateKey(rawRepresentation: sk), ciphersuite: ref,
                                           info: Data(info), encapsulatedKey: Data(kemOutput))
        } else {
            recipient = try HPKE.Recipient(privateKey: try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: sk), ciphersuite: ref,
                                           info: Data(info), encapsulatedKey: Data(kemOutput))
        }
        #expect(try recipient.exportSecret(context: [5], outputByteCount: 32).withUnsafeBytes { Array($0) } == secret)
    }

    @Test func rejectsLowOrderX25519Keys() throws {
        let suite = CipherSuite.x25519Aes128GcmSha256Ed25519
        let hpke = try HPKEBaseMode(suite: suite, info: [])
        let lowOrder = [UInt8](repeating: 0, count: 32)
        #expect { try hpke.seal(publicKey: lowOrder, aad: [], plaintext: [1]) } throws: { ($0 as? MLSError)?.code == .invalidKey }
        let (sk, _) = try suite.deriveKeyPair(ikm: Array(repeating: 1, count: 32))
        #expect { try hpke.open(privateKey: sk, kemOutput: lowOrder, aad: [], ciphertext: Array(repeating: 0, count: 17)) }
            throws: { ($0 as? MLSError)?.code == .decryptionFailed }
    }
}
