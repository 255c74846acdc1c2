import Testing
@testable import ImprintMLS

/// `process(batch:)` must be indistinguishable from calling `process` on each message.
@Suite struct BatchProcessingTests {
    private func outcome(_ r: Result<ProcessedMessage, any Error>) -> String {
        switch r {
        case let .success(m): "\(m)"
        case let .failure(e): "error \((e as? MLSError).map { "\($0.code)" } ?? "other")"
        }
    }

    @Test func batchGivesTheSameResultsAndStateAsOneByOne() throws {
        let suite = CipherSuite.x25519Aes128GcmSha256Ed25519
        func member(_ name: String) throws -> (Credential, [UInt8]) {
            (.basic(identity: Array(name.utf8)), try suite.generateSignatureKeyPair().privateKey)
        }
        let (ac, ak) = try member("alice"), (bc, bk) = try member("bob"), (cc, ck) = try member("carol")
        var alice = try MLSGroup.create(suite: suite, groupID: Array("batch".utf8), credential: ac, signaturePrivateKey: ak)
        let (bkp, bpriv) = try KeyPackage.create(suite: suite, credential: bc, signaturePrivateKey: bk)
        let (ckp, cpriv) = try KeyPackage.create(suite: suite, credential: cc, signaturePrivateKey: ck)
        let out = try alice.commit([.add(bkp), .add(ckp)])
        let welcome = try #require(out.welcome)
        var bob = try MLSGroup.join(welcome: welcome, keyPackage: bkp, privateKeys: bpriv, ratchetTree: alice.tree.wire)
        let carol = try MLSGroup.join(welcome: welcome, keyPackage: ckp, privateKeys: cpriv, ratchetTree: alice.tree.wire)

        var inbox: [MLSMessage] = []
        for i in 0..<40 {
            if i % 3 == 0 {
                inbox.append(try bob.encrypt(Array("m\(i)".utf8)))
            } else {
                inbox.append(try alice.encrypt(Array("m\(i)".utf8)))
            }
        }
        inbox.append(inbox[5])                                   // a replay: its key is gone
        var tampered = inbox[7]
        if case var .privateMessage(p) = tampered { p.ciphertext[0] ^= 1; tampered = .privateMessage(p) }
        inbox.append(tampered)                                   // fails to open
        let lateFromEpoch1 = try bob.encrypt(Array("late".utf8)) // delivered after the commit
        // A message that opens but whose signature is not the sender's.
        var forger = bob
        forger.signer = try SignatureSigner(suite: suite, privateKey: try suite.generateSignatureKeyPair().privateKey)
        inbox.append(try forger.encrypt(Array("forged".utf8)))
        let commit = try alice.commit(options: CommitOptions(forcePath: true))
        inbox.append(commit.commit)                              // ends the run; new epoch
        inbox.append(lateFromEpoch1)                              // past epoch
        for i in 0..<20 { inbox.append(try alice.encrypt(Array("n\(i)".utf8))) }

        var oneByOne = carol
        let expected = inbox.map { m in Result { try oneByOne.process(m) } }
        var batched = carol
        let got = batched.process(batch: inbox)
        #expect(got.map(outcome) == expected.map(outcome))
        #expect(batched.serializedState() == oneByOne.serializedState())
        // Sanity: the interesting cases really happened.
        #expect(outcome(got[40]) == "error \(MLSError.Code.secretConsumed)")
        #expect(outcome(got[42]) == "error \(MLSError.Code.signatureInvalid)")
        #expect(got.filter { if case .success(.application) = $0 { true } else { false } }.count == 61)
    }
}
