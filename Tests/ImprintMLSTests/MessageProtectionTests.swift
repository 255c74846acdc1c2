import Testing
@testable import ImprintMLS

@Suite struct MessageProtectionTests {
    @Test(arguments: CryptoTests.suites) func privateMessageRoundTripAndForwardSecrecy(suite: CipherSuite) throws {
        let (sk, pk) = try suite.generateSignatureKeyPair()
        let ctx = GroupContext(cipherSuite: suite, groupID: [1, 2], epoch: 7, treeHash: [3], confirmedTranscriptHash: [4], extensions: [])
        let enc = [UInt8](repeating: 9, count: 32), sds = [UInt8](repeating: 8, count: 32)
        var sendTree = SecretTree(suite: suite, encryptionSecret: enc, leafCount: 2)
        var recvTree = SecretTree(suite: suite, encryptionSecret: enc, leafCount: 2)
        let framed = FramedContent(groupID: [1, 2], epoch: 7, sender: .member(leafIndex: 0), authenticatedData: [5], content: .application(Array("hello".utf8)))
        let msg = try MessageProtection.protectPrivate(suite: suite, content: framed, confirmationTag: nil, context: ctx, signaturePrivateKey: sk,
                                                       senderDataSecret: sds, secretTree: &sendTree, paddingBlock: 16)
        let wire = MLSMessage.privateMessage(msg).tlsBytes
        guard case let .privateMessage(decoded) = try MLSMessage(tlsBytes: wire) else { Issue.record("wrong type"); return }
        let ac = try MessageProtection.unprotectPrivate(suite: suite, decoded, groupID: [1, 2], epoch: 7, senderDataSecret: sds, secretTree: &recvTree)
        try MessageProtection.verifySignature(suite: suite, ac, context: ctx, signaturePublicKey: pk)
        #expect(ac.content == framed)
        // Second decryption of the same message fails: the key is gone.
        #expect { try MessageProtection.unprotectPrivate(suite: suite, decoded, groupID: [1, 2], epoch: 7, senderDataSecret: sds, secretTree: &recvTree) }
            throws: { ($0 as? MLSError)?.code == .secretConsumed }
        // Tampering is detected.
        var bad = decoded
        bad.ciphertext[bad.ciphertext.count - 1] ^= 1
        var fresh = SecretTree(suite: suite, encryptionSecret: enc, leafCount: 2)
        #expect(throws: MLSError.self) { try MessageProtection.unprotectPrivate(suite: suite, bad, groupID: [1, 2], epoch: 7, senderDataSecret: sds, secretTree: &fresh) }
        #expect { try MessageProtection.unprotectPrivate(suite: suite, decoded, groupID: [1, 2], epoch: 8, senderDataSecret: sds, secretTree: &fresh) }
            throws: { ($0 as? MLSError)?.code == .wrongEpoch }
    }

    @Test func publicMessageMembershipTagAndSignature() throws {
        let suite = CipherSuite.x25519Aes128GcmSha256Ed25519
        let (sk, pk) = try suite.generateSignatureKeyPair()
        let ctx = GroupContext(cipherSuite: suite, groupID: [1], epoch: 0, treeHash: [], confirmedTranscriptHash: [], extensions: [])
        let framed = FramedContent(groupID: [1], epoch: 0, sender: .member(leafIndex: 3), authenticatedData: [], content: .proposal(.remove(leafIndex: 1)))
        let key = [UInt8](repeating: 1, count: 32)
        let m = try MessageProtection.protectPublic(suite: suite, content: framed, confirmationTag: nil, context: ctx, signaturePrivateKey: sk, membershipKey: key)
        let ac = try MessageProtection.unprotectPublic(suite: suite, m, context: ctx, membershipKey: key)
        try MessageProtection.verifySignature(suite: suite, ac, context: ctx, signaturePublicKey: pk)
        #expect { try MessageProtection.unprotectPublic(suite: suite, m, context: ctx, membershipKey: [UInt8](repeating: 2, count: 32)) }
            throws: { ($0 as? MLSError)?.code == .membershipTagInvalid }
        let (_, otherPK) = try suite.generateSignatureKeyPair()
        #expect { try MessageProtection.verifySignature(suite: suite, ac, context: ctx, signaturePublicKey: otherPK) }
            throws: { ($0 as? MLSError)?.code == .signatureInvalid }
    }
}
