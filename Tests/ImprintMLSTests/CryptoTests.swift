import Testing
@testable import ImprintMLS

@Suite struct CryptoTests {
    static let suites: [CipherSuite] = [.x25519Aes128GcmSha256Ed25519, .p256Aes128GcmSha256P256, .x25519ChaCha20Poly1305Sha256Ed25519]

    @Test(arguments: suites) func signAndVerify(suite: CipherSuite) throws {
        let (sk, pk) = try suite.generateSignatureKeyPair()
        let sig = try suite.signWithLabel(privateKey: sk, label: "Test", content: [1, 2, 3])
        #expect(try suite.verifyWithLabel(publicKey: pk, label: "Test", content: [1, 2, 3], signature: sig))
        #expect(try !suite.verifyWithLabel(publicKey: pk, label: "Test", content: [1, 2, 4], signature: sig))
        #expect(try !suite.verifyWithLabel(publicKey: [1, 2, 3], label: "Test", content: [1, 2, 3], signature: sig))
    }

    @Test(arguments: suites) func hpkeRoundTripAndDeriveKeyPair(suite: CipherSuite) throws {
        let (sk, pk) = try suite.deriveKeyPair(ikm: Array(repeating: 7, count: 32))
        let (sk2, pk2) = try suite.deriveKeyPair(ikm: Array(repeating: 7, count: 32))
        #expect(sk == sk2 && pk == pk2)
        let ct = try suite.encryptWithLabel(publicKey: pk, label: "L", context: [9], plaintext: [1, 2, 3])
        #expect(try suite.decryptWithLabel(privateKey: sk, label: "L", context: [9], kemOutput: ct.kemOutput, ciphertext: ct.ciphertext) == [1, 2, 3])
        #expect { try suite.decryptWithLabel(privateKey: sk, label: "L", context: [8], kemOutput: ct.kemOutput, ciphertext: ct.ciphertext) }
            throws: { ($0 as? MLSError)?.code == .decryptionFailed }
    }

    @Test(arguments: suites) func aeadRejectsTampering(suite: CipherSuite) throws {
        let key = Array(repeating: UInt8(1), count: suite.aeadKeyLength)
        let nonce = Array(repeating: UInt8(2), count: suite.aeadNonceLength)
        var ct = try suite.aeadSeal(key: key, nonce: nonce, aad: [3], plaintext: [4, 5, 6])
        #expect(try suite.aeadOpen(key: key, nonce: nonce, aad: [3], ciphertext: ct) == [4, 5, 6])
        ct[0] ^= 1
        #expect { try suite.aeadOpen(key: key, nonce: nonce, aad: [3], ciphertext: ct) } throws: { ($0 as? MLSError)?.code == .decryptionFailed }
        #expect { try suite.aeadOpen(key: key, nonce: nonce, aad: [3], ciphertext: [1, 2]) } throws: { ($0 as? MLSError)?.code == .decryptionFailed }
    }

    @Test func unsupportedSuiteThrows() {
        #expect { try CipherSuite(rawValue: 4).deriveSecret(secret: [], label: "x") } throws: { ($0 as? MLSError)?.code == .unsupportedCipherSuite }
    }
}
