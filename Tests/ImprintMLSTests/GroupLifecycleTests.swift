import Testing
@testable import ImprintMLS

/// End-to-end group lifecycle between several in-memory members.
@Suite struct GroupLifecycleTests {
    struct Client {
        let name: String
        let signatureKey: [UInt8]
        var credential: Credential { .basic(identity: Array(name.utf8)) }
        init(_ name: String, _ suite: CipherSuite) throws {
            self.name = name
            signatureKey = try suite.generateSignatureKeyPair().privateKey
        }
        func keyPackage(_ suite: CipherSuite) throws -> (KeyPackage, KeyPackagePrivateKeys) {
            try KeyPackage.create(suite: suite, credential: credential, signaturePrivateKey: signatureKey)
        }
    }

    static func roundTrip(_ m: MLSMessage) throws -> MLSMessage { try MLSMessage(tlsBytes: m.tlsBytes) }

    static func expectSameEpoch(_ groups: [MLSGroup]) throws {
        guard let first = groups.first else { return }
        for g in groups {
            #expect(g.epoch == first.epoch)
            #expect(g.epochAuthenticator == first.epochAuthenticator)
            #expect(g.tree.treeHash == first.tree.treeHash)
            #expect(try g.exportSecret(label: "test", context: [1], length: 16) == first.exportSecret(label: "test", context: [1], length: 16))
        }
    }

    @Test(arguments: CryptoTests.suites) func fullLifecycle(suite: CipherSuite) throws {
        let alice = try Client("alice", suite), bob = try Client("bob", suite), carol = try Client("carol", suite), dave = try Client("dave", suite)
        var a = try MLSGroup.create(suite: suite, groupID: Array("group".utf8), credential: alice.credential, signaturePrivateKey: alice.signatureKey)

        // Alice adds Bob and Carol in one commit; Bob gets the tree in the Welcome, Carol out of band.
        let (bkp, bpriv) = try bob.keyPackage(suite)
        let (ckp, cpriv) = try carol.keyPackage(suite)
        let out = try a.commit([.add(bkp), .add(ckp)], options: CommitOptions(ratchetTreeInWelcome: false))
        let welcome = try #require(out.welcome)
        let wireWelcome = try Welcome(tlsBytes: welcome.tlsBytes)
        #expect(throws: MLSError.self) { try MLSGroup.join(welcome: wireWelcome, keyPackage: bkp, privateKeys: bpriv) } // no tree
        var b = try MLSGroup.join(welcome: wireWelcome, keyPackage: bkp, privateKeys: bpriv, ratchetTree: a.tree.wire)
        var c = try MLSGroup.join(welcome: wireWelcome, keyPackage: ckp, privateKeys: cpriv, ratchetTree: a.tree.wire)
        try Self.expectSameEpoch([a, b, c])
        #expect(a.epoch == 1)
        #expect(c.members.map(\.credential) == [alice.credential, bob.credential, carol.credential])
        #expect(c.members.map(\.leafIndex) == [0, 1, 2])

        // Application messages, both ways; a replay fails.
        let m1 = try Self.roundTrip(try b.encrypt(Array("hi".utf8)))
        guard case let .application(data, sender, _) = try a.process(m1) else { Issue.record("not application"); return }
        #expect(data == Array("hi".utf8) && sender == b.myLeaf)
        #expect { try a.process(m1) } throws: { ($0 as? MLSError)?.code == .secretConsumed }
        _ = try c.process(m1)

        // Bob commits an update (path) as a PrivateMessage.
        let up = try b.commit(options: CommitOptions(forcePath: true, encrypt: true))
        #expect(try a.process(Self.roundTrip(up.commit)) == .commit(epoch: 2))
        _ = try c.process(Self.roundTrip(up.commit))
        try Self.expectSameEpoch([a, b, c])

        // Carol proposes removing Bob; Alice commits it by reference.
        let prop = try Self.roundTrip(try c.propose(.remove(leafIndex: b.myLeaf)))
        guard case .proposal = try a.process(prop) else { Issue.record("not proposal"); return }
        _ = try b.process(prop)
        let rm = try a.commit()
        _ = try c.process(Self.roundTrip(rm.commit))
        #expect(try b.process(Self.roundTrip(rm.commit)) == .removed(epoch: 3))
        try Self.expectSameEpoch([a, c])
        #expect(a.tree.leaf(1) == nil)

        // Bob, removed, cannot read the new epoch.
        let secret = try Self.roundTrip(try a.encrypt(Array("secret".utf8)))
        #expect(throws: MLSError.self) { try b.process(secret) }
        _ = try c.process(secret)

        // External PSK and GroupContextExtensions.
        let pskID = Array("psk1".utf8), psk = [UInt8](repeating: 7, count: 32)
        a.addExternalPSK(id: pskID, secret: psk)
        c.addExternalPSK(id: pskID, secret: psk)
        let pskCommit = try a.commit([.preSharedKey(PreSharedKeyID(kind: .external(pskID: pskID), nonce: [UInt8](repeating: 1, count: 32))),
                                      .groupContextExtensions([Extension(type: Extension.applicationID, data: [9])])])
        _ = try c.process(Self.roundTrip(pskCommit.commit))
        try Self.expectSameEpoch([a, c])
        #expect(c.context.extensions == [Extension(type: Extension.applicationID, data: [9])])

        // Resumption PSK from an earlier epoch.
        let res = PreSharedKeyID(kind: .resumption(usage: 1, groupID: a.groupID, epoch: a.epoch - 1), nonce: [UInt8](repeating: 2, count: 32))
        let resCommit = try a.commit([.preSharedKey(res)])
        _ = try c.process(Self.roundTrip(resCommit.commit))
        try Self.expectSameEpoch([a, c])

        // Dave joins by external commit from Alice's GroupInfo.
        let info = try GroupInfo(tlsBytes: try a.groupInfo().tlsBytes)
        var (d, ext) = try MLSGroup.joinByExternalCommit(groupInfo: info, credential: dave.credential, signaturePrivateKey: dave.signatureKey)
        _ = try a.process(Self.roundTrip(ext))
        _ = try c.process(Self.roundTrip(ext))
        try Self.expectSameEpoch([a, c, d])
        let hello = try Self.roundTrip(try d.encrypt(Array("hello from dave".utf8)))
        guard case let .application(hd, _, _) = try c.process(hello) else { Issue.record("not application"); return }
        #expect(hd == Array("hello from dave".utf8))

        // A tampered commit is rejected and leaves the state unchanged.
        let next = try d.commit(options: CommitOptions(forcePath: true))
        guard case var .publicMessage(pm) = next.commit else { Issue.record("expected PublicMessage"); return }
        pm.auth.confirmationTag![0] ^= 1
        let before = a.epochAuthenticator
        #expect(throws: MLSError.self) { try a.process(.publicMessage(pm)) }
        #expect(a.epochAuthenticator == before)
        _ = try a.process(next.commit)
        _ = try c.process(next.commit)
        try Self.expectSameEpoch([a, c, d])
    }

    @Test func welcomeWithTreeAndPathSecret() throws {
        let suite = CipherSuite.x25519Aes128GcmSha256Ed25519
        let alice = try Client("alice", suite), bob = try Client("bob", suite), carol = try Client("carol", suite), dave = try Client("dave", suite)
        var a = try MLSGroup.create(suite: suite, groupID: [1], credential: alice.credential, signaturePrivateKey: alice.signatureKey)
        let (bkp, bpriv) = try bob.keyPackage(suite)
        let (ckp, cpriv) = try carol.keyPackage(suite)
        let out1 = try a.commit([.add(bkp), .add(ckp)])
        var b = try MLSGroup.join(welcome: try #require(out1.welcome), keyPackage: bkp, privateKeys: bpriv)
        var c = try MLSGroup.join(welcome: try #require(out1.welcome), keyPackage: ckp, privateKeys: cpriv)
        // A commit with a path adding Dave at leaf 3: the root (node 3) is on Alice's
        // filtered direct path, so Dave's GroupSecrets carry its path secret.
        let (dkp, dpriv) = try dave.keyPackage(suite)
        let out2 = try a.commit([.add(dkp)], options: CommitOptions(forcePath: true))
        _ = try b.process(out2.commit)
        _ = try c.process(out2.commit)
        let d = try MLSGroup.join(welcome: try #require(out2.welcome), keyPackage: dkp, privateKeys: dpriv)
        #expect(d.myLeaf == 3)
        #expect(d.nodeKeys[3] != nil)
        try Self.expectSameEpoch([a, b, c, d])
        // Expired KeyPackages are refused by Add validation, at an injected time.
        let (old, _) = try KeyPackage.create(suite: suite, credential: .basic(identity: [5]), signaturePrivateKey: try suite.generateSignatureKeyPair().privateKey,
                                             lifetime: Lifetime(notBefore: 100, notAfter: 200))
        #expect { try a.commit([.add(old)], clock: .fixed(1000)) } throws: { ($0 as? MLSError)?.code == .invalidKeyPackage }
        _ = try a.commit([.add(old)], clock: .fixed(150))
    }

    @Test func committerDropsConflictingPendingProposals() throws {
        let suite = CipherSuite.x25519Aes128GcmSha256Ed25519
        let names = ["alice", "bob", "carol", "dave"]
        let clients = try names.map { try Client($0, suite) }
        var a = try MLSGroup.create(suite: suite, groupID: [8], credential: clients[0].credential, signaturePrivateKey: clients[0].signatureKey)
        let kps = try clients[1...].map { try $0.keyPackage(suite) }
        let out = try a.commit(kps.map { .add($0.0) })
        var g = try kps.map { try MLSGroup.join(welcome: try #require(out.welcome), keyPackage: $0.0, privateKeys: $0.1) }
        // Bob and Carol both propose removing Dave; Dave proposes an Update.
        let p1 = try g[0].propose(.remove(leafIndex: g[2].myLeaf))
        let p2 = try g[1].propose(.remove(leafIndex: g[2].myLeaf))
        let p3 = try g[2].proposeUpdate()
        for m in [p1, p2, p3] {
            _ = try a.process(m)
            for i in g.indices { _ = try? g[i].process(m) } // senders cannot process their own
        }
        let commit = try a.commit()
        guard case let .publicMessage(pm) = commit.commit, case let .commit(c) = pm.content.content else { Issue.record("no commit"); return }
        #expect(c.proposals.count == 1) // one Remove; the duplicate and the removed member's Update dropped
        _ = try g[0].process(commit.commit)
        _ = try g[1].process(commit.commit)
        #expect(a.tree.leaf(3) == nil)
        try Self.expectSameEpoch([a, g[0], g[1]])
    }

    @Test func externalCommitResync() throws {
        let suite = CipherSuite.x25519ChaCha20Poly1305Sha256Ed25519
        let alice = try Client("alice", suite), bob = try Client("bob", suite), carol = try Client("carol", suite)
        var a = try MLSGroup.create(suite: suite, groupID: [9], credential: alice.credential, signaturePrivateKey: alice.signatureKey)
        let (bkp, bpriv) = try bob.keyPackage(suite)
        let (ckp, cpriv) = try carol.keyPackage(suite)
        let out = try a.commit([.add(bkp), .add(ckp)])
        let b = try MLSGroup.join(welcome: try #require(out.welcome), keyPackage: bkp, privateKeys: bpriv)
        var c = try MLSGroup.join(welcome: try #require(out.welcome), keyPackage: ckp, privateKeys: cpriv)
        // Bob lost his state and comes back, replacing his old leaf.
        let info = try a.groupInfo()
        #expect(throws: MLSError.self) {
            try MLSGroup.joinByExternalCommit(groupInfo: info, credential: bob.credential, signaturePrivateKey: bob.signatureKey, removing: c.myLeaf)
        }
        var (b2, msg) = try MLSGroup.joinByExternalCommit(groupInfo: info, credential: bob.credential, signaturePrivateKey: bob.signatureKey, removing: b.myLeaf)
        _ = try a.process(msg)
        _ = try c.process(msg)
        try Self.expectSameEpoch([a, b2, c])
        #expect(a.members.count == 3)
        #expect(b2.myLeaf == b.myLeaf)
        let m = try b2.encrypt([42])
        guard case let .application(data, _, _) = try c.process(m) else { Issue.record("not application"); return }
        #expect(data == [42])
    }

    @Test func externalSenderAndNewMemberProposals() throws {
        let suite = CipherSuite.p256Aes128GcmSha256P256
        let alice = try Client("alice", suite), bob = try Client("bob", suite), server = try Client("ds", suite), dave = try Client("dave", suite)
        var w = TLSWriter()
        w.writeVector { v in
            v.writeOpaque(try! suite.signaturePublicKey(privateKey: server.signatureKey))
            server.credential.encode(to: &v)
        }
        let ext = Extension(type: Extension.externalSenders, data: w.bytes)
        var a = try MLSGroup.create(suite: suite, groupID: [10], credential: alice.credential, signaturePrivateKey: alice.signatureKey, extensions: [ext])
        let (bkp, bpriv) = try bob.keyPackage(suite)
        let out = try a.commit([.add(bkp)])
        var b = try MLSGroup.join(welcome: try #require(out.welcome), keyPackage: bkp, privateKeys: bpriv)

        func external(_ p: Proposal, sender: Sender, key: [UInt8]) throws -> MLSMessage {
            let framed = FramedContent(groupID: a.groupID, epoch: a.epoch, sender: sender, authenticatedData: [], content: .proposal(p))
            let sig = try MessageProtection.sign(suite: suite, wireFormat: .publicMessage, content: framed, context: a.context, signaturePrivateKey: key)
            return .publicMessage(PublicMessage(content: framed, auth: FramedContentAuthData(signature: sig, confirmationTag: nil), membershipTag: nil))
        }
        // The delivery service (external sender 0) proposes removing Bob; Alice commits it.
        let rm = try external(.remove(leafIndex: b.myLeaf), sender: .external(senderIndex: 0), key: server.signatureKey)
        guard case .proposal = try a.process(rm) else { Issue.record("not a proposal"); return }
        // Signed by someone else, or an Update, or an unknown sender index: refused.
        #expect { try b.process(try external(.remove(leafIndex: 0), sender: .external(senderIndex: 0), key: dave.signatureKey)) }
            throws: { ($0 as? MLSError)?.code == .signatureInvalid }
        #expect { try b.process(try external(.remove(leafIndex: 0), sender: .external(senderIndex: 1), key: server.signatureKey)) }
            throws: { ($0 as? MLSError)?.code == .invalidMessage }
        #expect { try b.process(try external(.update(b.tree.leaf(0)!), sender: .external(senderIndex: 0), key: server.signatureKey)) }
            throws: { ($0 as? MLSError)?.code == .invalidProposal }
        // Dave asks to join (new_member_proposal, signed with his KeyPackage key).
        let (dkp, dpriv) = try dave.keyPackage(suite)
        let join = try external(.add(dkp), sender: .newMemberProposal, key: dave.signatureKey)
        guard case .proposal = try a.process(join) else { Issue.record("not a proposal"); return }
        _ = try b.process(rm)
        _ = try b.process(join)
        let commit = try a.commit()
        #expect(try b.process(commit.commit) == .removed(epoch: 2))
        let d = try MLSGroup.join(welcome: try #require(commit.welcome), keyPackage: dkp, privateKeys: dpriv)
        try Self.expectSameEpoch([a, d])
        #expect(a.members.map(\.credential) == [alice.credential, dave.credential])
    }
}
