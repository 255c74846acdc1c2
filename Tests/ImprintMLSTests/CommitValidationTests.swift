import Testing
@testable import ImprintMLS

/// Hostile commits, correctly signed and tagged by a member, must be refused
/// by validation with the right error code, leaving the receiver unchanged.
@Suite struct CommitValidationTests {
    typealias Client = GroupLifecycleTests.Client
    let suite = CipherSuite.x25519Aes128GcmSha256Ed25519

    /// A three-member group: (alice, bob, carol).
    func trio() throws -> (MLSGroup, MLSGroup, MLSGroup, Client) {
        let alice = try Client("alice", suite), bob = try Client("bob", suite), carol = try Client("carol", suite)
        var a = try MLSGroup.create(suite: suite, groupID: [3], credential: alice.credential, signaturePrivateKey: alice.signatureKey)
        let (bkp, bpriv) = try bob.keyPackage(suite)
        let (ckp, cpriv) = try carol.keyPackage(suite)
        let out = try a.commit([.add(bkp), .add(ckp)])
        let w = try #require(out.welcome)
        return (a, try MLSGroup.join(welcome: w, keyPackage: bkp, privateKeys: bpriv), try MLSGroup.join(welcome: w, keyPackage: ckp, privateKeys: cpriv), alice)
    }

    /// Frames `commit` from `sender` as a signed PublicMessage with a membership tag and a junk confirmation tag.
    func forge(_ commit: Commit, from sender: inout MLSGroup) throws -> MLSMessage {
        let framed = FramedContent(groupID: sender.groupID, epoch: sender.epoch, sender: .member(leafIndex: sender.myLeaf), authenticatedData: [], content: .commit(commit))
        let sig = try MessageProtection.sign(suite: suite, wireFormat: .publicMessage, content: framed, context: sender.context, signaturePrivateKey: sender.signaturePrivateKey)
        let ac = AuthenticatedContent(wireFormat: .publicMessage, content: framed,
                                      auth: FramedContentAuthData(signature: sig, confirmationTag: [UInt8](repeating: 0, count: 32)))
        return try sender.protect(ac)
    }

    func expectRefused(_ message: MLSMessage, by receiver: MLSGroup, _ code: MLSError.Code, sourceLocation: SourceLocation = #_sourceLocation) {
        var r = receiver
        #expect(sourceLocation: sourceLocation) { try r.process(message) } throws: { ($0 as? MLSError)?.code == code }
        #expect(r.epochAuthenticator == receiver.epochAuthenticator, sourceLocation: sourceLocation)
    }

    @Test func proposalListRules() throws {
        var (a, b, _, _) = try trio()
        _ = b
        expectRefused(try forge(Commit(proposals: [.proposal(.remove(leafIndex: 0))], path: nil), from: &a), by: b, .invalidCommit) // removes committer
        expectRefused(try forge(Commit(proposals: [.proposal(.remove(leafIndex: 2)), .proposal(.remove(leafIndex: 2))], path: nil), from: &a), by: b, .invalidCommit)
        expectRefused(try forge(Commit(proposals: [.proposal(.remove(leafIndex: 2))], path: nil), from: &a), by: b, .invalidCommit) // path required
        expectRefused(try forge(Commit(proposals: [.proposal(.update(a.tree.leaf(0)!))], path: nil), from: &a), by: b, .invalidCommit) // committer's Update
        expectRefused(try forge(Commit(proposals: [.proposal(.externalInit(kemOutput: [1]))], path: nil), from: &a), by: b, .invalidCommit)
        expectRefused(try forge(Commit(proposals: [.reference([UInt8](repeating: 1, count: 32))], path: nil), from: &a), by: b, .notFound)
        expectRefused(try forge(Commit(proposals: [.proposal(.remove(leafIndex: 9))], path: nil), from: &a), by: b, .invalidProposal)
        let gce = Proposal.groupContextExtensions([])
        expectRefused(try forge(Commit(proposals: [.proposal(gce), .proposal(gce)], path: nil), from: &a), by: b, .invalidCommit)
        let psk = Proposal.preSharedKey(PreSharedKeyID(kind: .external(pskID: [1]), nonce: [1, 2]))
        expectRefused(try forge(Commit(proposals: [.proposal(psk)], path: nil), from: &a), by: b, .invalidProposal) // nonce length
        // Valid shape but a junk confirmation tag.
        expectRefused(try forge(Commit(proposals: [], path: nil), from: &a), by: b, .invalidCommit) // empty commit needs a path
    }

    /// A KeyPackage listing only `credentials` in its capabilities.
    func keyPackage(credential: Credential, supporting credentials: [UInt16]) throws -> KeyPackage {
        let (key, _) = try suite.generateSignatureKeyPair()
        var (kp, _) = try KeyPackage.create(suite: suite, credential: credential, signaturePrivateKey: key)
        kp.leafNode.capabilities.credentials = credentials
        try kp.leafNode.sign(suite: suite, signaturePrivateKey: key, groupID: [], leafIndex: 0)
        kp.signature = try suite.signWithLabel(privateKey: key, label: "KeyPackageTBS", content: kp.toBeSigned)
        return kp
    }

    @Test func addedMembersMustShareCredentialTypes() throws {
        var (a, b, _, _) = try trio()
        // Supports only X.509 while the members use basic credentials.
        let x509Only = try keyPackage(credential: .x509(certificates: [[1, 2, 3]]), supporting: [Credential.x509Type])
        #expect { var probe = a; _ = try probe.commit([.add(x509Only)]) } throws: { ($0 as? MLSError)?.code == .invalidLeafNode }
        expectRefused(try forge(Commit(proposals: [.proposal(.add(x509Only))], path: nil), from: &a), by: b, .invalidLeafNode)
        // Uses X.509, which every member supports, and supports basic too: accepted.
        let x509 = try keyPackage(credential: .x509(certificates: [[1, 2, 3]]), supporting: [Credential.basicType, Credential.x509Type])
        let out = try a.commit([.add(x509)])
        guard case .commit = try b.process(out.commit) else { Issue.record("commit not applied"); return }
        #expect(b.epochAuthenticator == a.epochAuthenticator)
    }

    @Test func addedKeyPackagesAreValidated() throws {
        var (a, b, c, _) = try trio()
        let dave = try Client("dave", suite)
        var (kp, _) = try dave.keyPackage(suite)
        kp.signature[0] ^= 1
        expectRefused(try forge(Commit(proposals: [.proposal(.add(kp))], path: nil), from: &a), by: b, .signatureInvalid)
        let (p256kp, _) = try KeyPackage.create(suite: .p256Aes128GcmSha256P256, credential: dave.credential,
                                                signaturePrivateKey: try CipherSuite.p256Aes128GcmSha256P256.generateSignatureKeyPair().privateKey)
        expectRefused(try forge(Commit(proposals: [.proposal(.add(p256kp))], path: nil), from: &a), by: b, .invalidKeyPackage)
        // A member's own signature key again...
        let (dup, dupPriv) = try KeyPackage.create(suite: suite, credential: dave.credential, signaturePrivateKey: b.signaturePrivateKey)
        expectRefused(try forge(Commit(proposals: [.proposal(.add(dup))], path: nil), from: &a), by: b, .invalidCommit)
        #expect { try a.commit([.add(dup)]) } throws: { ($0 as? MLSError)?.code == .invalidProposal }
        // ...is fine when that member is removed in the same commit.
        var c2 = a
        let replace = try c2.commit([.remove(leafIndex: b.myLeaf), .add(dup)])
        var receiver = c
        #expect(try receiver.process(replace.commit) == .commit(epoch: c2.epoch))
        let joined = try MLSGroup.join(welcome: try #require(replace.welcome), keyPackage: dup, privateKeys: dupPriv)
        #expect(joined.epochAuthenticator == c2.epochAuthenticator)
    }

    @Test func updatePathIsValidated() throws {
        var (a, b, _, _) = try trio()
        // A genuine path, then damaged in several ways (re-signed by Alice so only the targeted check fails).
        var probe = a
        let good = try probe.commit(options: CommitOptions(forcePath: true))
        guard case let .publicMessage(pm) = good.commit, case let .commit(c) = pm.content.content, let path = c.path else {
            Issue.record("expected a PublicMessage commit with a path"); return
        }
        var short = path
        short.nodes.removeLast()
        expectRefused(try forge(Commit(proposals: [], path: short), from: &a), by: b, .invalidCommit)

        var badPH = path
        badPH.leafNode.source = .commit(parentHash: [UInt8](repeating: 9, count: 32))
        try badPH.leafNode.sign(suite: suite, signaturePrivateKey: a.signaturePrivateKey, groupID: a.groupID, leafIndex: a.myLeaf)
        expectRefused(try forge(Commit(proposals: [], path: badPH), from: &a), by: b, .invalidParentHash)

        var sameKey = path
        sameKey.leafNode.encryptionKey = a.tree.leaf(a.myLeaf)!.encryptionKey
        try sameKey.leafNode.sign(suite: suite, signaturePrivateKey: a.signaturePrivateKey, groupID: a.groupID, leafIndex: a.myLeaf)
        expectRefused(try forge(Commit(proposals: [], path: sameKey), from: &a), by: b, .invalidCommit)

        var unsigned = path
        unsigned.leafNode.signature[0] ^= 1
        expectRefused(try forge(Commit(proposals: [], path: unsigned), from: &a), by: b, .signatureInvalid)

        var wrongSource = path
        wrongSource.leafNode.source = .update
        try wrongSource.leafNode.sign(suite: suite, signaturePrivateKey: a.signaturePrivateKey, groupID: a.groupID, leafIndex: a.myLeaf)
        expectRefused(try forge(Commit(proposals: [], path: wrongSource), from: &a), by: b, .invalidLeafNode)

        // The untouched path with the forged (wrong) confirmation tag.
        expectRefused(try forge(Commit(proposals: [], path: path), from: &a), by: b, .confirmationTagInvalid)
        // And the genuine commit is accepted.
        var ok = b
        #expect(try ok.process(good.commit) == .commit(epoch: b.epoch + 1))
    }

    @Test func framingRules() throws {
        var (a, b, _, _) = try trio()
        // Application data in a PublicMessage is refused even when correctly signed and tagged.
        let framed = FramedContent(groupID: a.groupID, epoch: a.epoch, sender: .member(leafIndex: 0), authenticatedData: [], content: .application([1]))
        let sig = try MessageProtection.sign(suite: suite, wireFormat: .publicMessage, content: framed, context: a.context, signaturePrivateKey: a.signaturePrivateKey)
        let tag = MessageProtection.membershipTag(suite: suite, membershipKey: a.secrets.membershipKey, content: framed,
                                                  auth: FramedContentAuthData(signature: sig, confirmationTag: nil), context: a.context)
        expectRefused(.publicMessage(PublicMessage(content: framed, auth: FramedContentAuthData(signature: sig, confirmationTag: nil), membershipTag: tag)), by: b, .invalidMessage)
        // Signed by someone else's key.
        var forged = try forge(Commit(proposals: [], path: nil), from: &a)
        if case var .publicMessage(pm) = forged {
            pm.content.sender = .member(leafIndex: 2)
            forged = .publicMessage(pm)
        }
        expectRefused(forged, by: b, .membershipTagInvalid)
        // A PrivateMessage claiming blank leaf 3 (keys derived from the real epoch) is refused
        // before any key of leaf 3 is touched.
        var st = b.secretTree
        let ghost = FramedContent(groupID: a.groupID, epoch: a.epoch, sender: .member(leafIndex: 3), authenticatedData: [], content: .application([7]))
        let ghostMsg = try MessageProtection.protectPrivate(suite: suite, content: ghost, confirmationTag: nil, context: a.context,
                                                            signaturePrivateKey: a.signaturePrivateKey, senderDataSecret: b.secrets.senderDataSecret, secretTree: &st)
        expectRefused(.privateMessage(ghostMsg), by: b, .invalidMessage)
        var probe = b
        _ = try? probe.process(.privateMessage(ghostMsg))
        #expect(probe.secretTree == b.secretTree)
        // Wrong epoch and wrong group.
        var other = a
        other.context.epoch += 5
        expectRefused(try forge(Commit(proposals: [], path: nil), from: &other), by: b, .wrongEpoch)
        var otherGroup = a
        otherGroup.context.groupID = [9, 9]
        expectRefused(try forge(Commit(proposals: [], path: nil), from: &otherGroup), by: b, .wrongGroup)
    }

    @Test func welcomeChecks() throws {
        let alice = try Client("alice", suite), bob = try Client("bob", suite)
        var a = try MLSGroup.create(suite: suite, groupID: [4], credential: alice.credential, signaturePrivateKey: alice.signatureKey)
        let (bkp, bpriv) = try bob.keyPackage(suite)
        let out = try a.commit([.add(bkp)], options: CommitOptions(ratchetTreeInWelcome: false))
        let w = try #require(out.welcome)
        // A different tree than the one the GroupContext commits to.
        var t = a.tree
        t.removeLeaf(1)
        #expect { try MLSGroup.join(welcome: w, keyPackage: bkp, privateKeys: bpriv, ratchetTree: t.wire) } throws: { ($0 as? MLSError)?.code == .invalidTree }
        // Someone else's KeyPackage.
        let (other, otherPriv) = try bob.keyPackage(suite)
        #expect { try MLSGroup.join(welcome: w, keyPackage: other, privateKeys: otherPriv, ratchetTree: a.tree.wire) } throws: { ($0 as? MLSError)?.code == .notFound }
        // A damaged encrypted GroupInfo.
        var bad = w
        bad.encryptedGroupInfo[0] ^= 1
        #expect(throws: MLSError.self) { try MLSGroup.join(welcome: bad, keyPackage: bkp, privateKeys: bpriv, ratchetTree: a.tree.wire) }
        _ = try MLSGroup.join(welcome: w, keyPackage: bkp, privateKeys: bpriv, ratchetTree: a.tree.wire)
    }

    @Test func extensionSupportIsChecked() throws {
        let alice = try Client("alice", suite), bob = try Client("bob", suite)
        // The creator's own leaf does not list extension 0xff00, which the group uses.
        var a = try MLSGroup.create(suite: suite, groupID: [5], credential: alice.credential, signaturePrivateKey: alice.signatureKey,
                                    extensions: [Extension(type: 0xff00, data: [1])])
        let (plain, _) = try bob.keyPackage(suite)
        #expect { try a.commit([.add(plain)]) } throws: { ($0 as? MLSError)?.code == .invalidLeafNode }
        // A KeyPackage that supports it is accepted by the committer...
        var (kp, priv) = try bob.keyPackage(suite)
        kp.leafNode.capabilities.extensions = [0xff00]
        try kp.leafNode.sign(suite: suite, signaturePrivateKey: bob.signatureKey, groupID: [], leafIndex: 0)
        kp.signature = try suite.signWithLabel(privateKey: bob.signatureKey, label: "KeyPackageTBS", content: kp.toBeSigned)
        let out = try a.commit([.add(kp)])
        // ...but the joiner sees a member (the creator) that does not support it.
        #expect { try MLSGroup.join(welcome: try #require(out.welcome), keyPackage: kp, privateKeys: priv) } throws: { ($0 as? MLSError)?.code == .invalidLeafNode }
    }

    @Test func groupContextExtensionsMustBeSupported() throws {
        var (a, b, _, _) = try trio()
        let unsupported = Proposal.groupContextExtensions([Extension(type: 0xff01, data: [])])
        #expect { try a.commit([unsupported]) } throws: { ($0 as? MLSError)?.code == .invalidProposal }
        // Forged by a member anyway: receivers refuse it.
        var probe = a
        let good = try probe.commit(options: CommitOptions(forcePath: true))
        guard case let .publicMessage(pm) = good.commit, case let .commit(c) = pm.content.content else { Issue.record("no commit"); return }
        expectRefused(try forge(Commit(proposals: [.proposal(unsupported)], path: c.path), from: &a), by: b, .invalidCommit)
    }
}
