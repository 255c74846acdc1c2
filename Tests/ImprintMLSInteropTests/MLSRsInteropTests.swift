import Foundation
import ImprintMLS
import Testing

/// ImprintMLS against AWS mls-rs, in-process on our side: groups created by
/// either implementation, application messages both ways, add / update /
/// remove commits from both sides, exporter agreement after every epoch, and
/// removed members locked out. What mls-rs cannot do (remove a member it did
/// not create itself, send handshakes as PrivateMessage) is covered only from
/// our side; see Tests/Interop/README.md.
@Suite("mls-rs interop", .serialized, .enabled(if: MLSRsPeer.available, "the mls-rs venv (.venv-peers) is missing"))
struct MLSRsInteropTests {
    /// Every listed member derives the same exporter secret, and is at `epoch`.
    func expectAgreement(_ ours: [OurMember], _ theirs: [String], epoch: UInt64, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let peer = try mlsRs()
        var secrets: [String: [UInt8]] = [:]
        for m in ours {
            #expect(m.epoch == epoch, "\(m.name) epoch", sourceLocation: sourceLocation)
            secrets[m.name] = try m.exportSecret()
        }
        for c in theirs {
            #expect(try peer.epoch(c) == epoch, "\(c) epoch", sourceLocation: sourceLocation)
            secrets[c] = try peer.exportSecret(c)
        }
        let distinct = Set(secrets.values)
        #expect(distinct.count == 1, "exporter secrets differ at epoch \(epoch): \(secrets.mapValues(hex))", sourceLocation: sourceLocation)
    }

    @Test("group created by ImprintMLS, mls-rs members: messages, adds, updates, removes both ways")
    func ourGroup() throws {
        let peer = try mlsRs()
        var alice = try OurMember("ours-alice")
        try alice.createGroup(id: Array("imprint-made group".utf8))

        // Epoch 1: we add two mls-rs members in one commit.
        let bobKP = try peer.newClient("ours-bob")
        let carolKP = try peer.newClient("ours-carol")
        let add = try alice.commit([.add(try KeyPackage.from(bobKP)), .add(try KeyPackage.from(carolKP))])
        let welcome = try #require(add.welcome)
        let gid = hex(alice.group!.groupID)
        for c in ["ours-bob", "ours-carol"] {
            let joined = try peer.call("join", ["client": c, "welcome": b64(MLSMessage.welcome(welcome).tlsBytes), "group": gid, "epoch": 1])
            #expect(joined["group"] as? String == gid)
        }
        try expectAgreement([alice], ["ours-bob", "ours-carol"], epoch: 1)
        let rsMembers = try #require(try peer.call("members", ["client": "ours-bob"])["members"] as? [[String: Any]])
        #expect(Set(rsMembers.compactMap { $0["name"] as? String }) == ["ours-alice", "ours-bob", "ours-carol"])

        // Application messages both ways (and mls-rs to mls-rs in our group).
        let fromAlice = try alice.encrypt("hello from ImprintMLS")
        #expect(try peer.decrypt("ours-bob", fromAlice) == "hello from ImprintMLS")
        #expect(try peer.decrypt("ours-carol", fromAlice) == "hello from ImprintMLS")
        let fromBob = try peer.encrypt("ours-bob", "hello from mls-rs")
        #expect(try alice.decrypt(fromBob) == "hello from mls-rs")
        #expect(try peer.decrypt("ours-carol", fromBob) == "hello from mls-rs")

        // Epoch 2: mls-rs commits with an UpdatePath; we process it.
        let bobUpdate = try peer.call("update", ["client": "ours-bob"])
        #expect(bobUpdate["path"] as? Bool == true)
        let bobCommit = try peer.bytes(bobUpdate, "commit")
        #expect(try alice.process(bobCommit) == .commit(epoch: 2))
        try peer.process("ours-carol", bobCommit)
        try expectAgreement([alice], ["ours-bob", "ours-carol"], epoch: 2)

        // Epoch 3: we commit with an UpdatePath, sent as a PrivateMessage.
        let aliceUpdate = try alice.commit([], options: CommitOptions(forcePath: true, encrypt: true))
        #expect(aliceUpdate.commit.wireFormat == .privateMessage)
        for c in ["ours-bob", "ours-carol"] {
            #expect(try peer.process(c, aliceUpdate.commit.tlsBytes)["kind"] as? String == "commit")
        }
        try expectAgreement([alice], ["ours-bob", "ours-carol"], epoch: 3)

        // Epoch 4: we add one of ours and one mls-rs client in one commit.
        var dave = try OurMember("ours-dave")
        let erinKP = try peer.newClient("ours-erin")
        let add2 = try alice.commit([.add(try KeyPackage.from(try dave.keyPackage())), .add(try KeyPackage.from(erinKP))])
        let welcome2 = MLSMessage.welcome(try #require(add2.welcome)).tlsBytes
        for c in ["ours-bob", "ours-carol"] { try peer.process(c, add2.commit.tlsBytes) }
        try dave.join(welcome2)
        try peer.call("join", ["client": "ours-erin", "welcome": b64(welcome2), "group": gid, "epoch": 4])
        try expectAgreement([alice, dave], ["ours-bob", "ours-carol", "ours-erin"], epoch: 4)

        // Epoch 5: mls-rs adds one of ours; we join from the mls-rs Welcome.
        var frank = try OurMember("ours-frank")
        let bobAdd = try peer.call("add", ["client": "ours-bob", "key_packages": [b64(try frank.keyPackage())]])
        let bobAddCommit = try peer.bytes(bobAdd, "commit")
        #expect(try alice.process(bobAddCommit) == .commit(epoch: 5))
        #expect(try dave.process(bobAddCommit) == .commit(epoch: 5))
        for c in ["ours-carol", "ours-erin"] { try peer.process(c, bobAddCommit) }
        try frank.join(try peer.bytes(bobAdd, "welcome"))
        try expectAgreement([alice, dave, frank], ["ours-bob", "ours-carol", "ours-erin"], epoch: 5)
        let fromFrank = try frank.encrypt("frank joined through mls-rs")
        #expect(try peer.decrypt("ours-erin", fromFrank) == "frank joined through mls-rs")
        #expect(try alice.decrypt(fromFrank) == "frank joined through mls-rs")

        // Epoch 6: we remove an mls-rs member; it learns it was removed.
        let removeCarol = try alice.commit([.remove(leafIndex: try alice.leaf(of: "ours-carol"))])
        let carolSees = try peer.process("ours-carol", removeCarol.commit.tlsBytes)
        #expect(carolSees["removed"] as? Bool == true)
        for c in ["ours-bob", "ours-erin"] { try peer.process(c, removeCarol.commit.tlsBytes) }
        try dave.process(removeCarol.commit.tlsBytes)
        try frank.process(removeCarol.commit.tlsBytes)
        try expectAgreement([alice, dave, frank], ["ours-bob", "ours-erin"], epoch: 6)
        // ... and cannot read what follows.
        let afterCarol = try alice.encrypt("carol must not read this")
        #expect(try peer.decrypt("ours-bob", afterCarol) == "carol must not read this")
        #expect(try peer.send("process", ["client": "ours-carol", "message": b64(afterCarol)])["ok"] as? Bool == false)

        // Epoch 7: mls-rs removes an mls-rs member (the only kind it can name).
        let bobRemove = try peer.call("remove", ["client": "ours-bob", "name": "ours-erin"])
        let bobRemoveCommit = try peer.bytes(bobRemove, "commit")
        #expect(try alice.process(bobRemoveCommit) == .commit(epoch: 7))
        try dave.process(bobRemoveCommit)
        try frank.process(bobRemoveCommit)
        #expect(try peer.process("ours-erin", bobRemoveCommit)["removed"] as? Bool == true)
        try expectAgreement([alice, dave, frank], ["ours-bob"], epoch: 7)
        let afterErin = try peer.encrypt("ours-bob", "erin must not read this")
        #expect(try dave.decrypt(afterErin) == "erin must not read this")
        #expect(try peer.send("process", ["client": "ours-erin", "message": b64(afterErin)])["ok"] as? Bool == false)
        #expect(Set(alice.group!.members.map(\.credential)) == Set(["ours-alice", "ours-bob", "ours-dave", "ours-frank"].map { Credential.basic(identity: Array($0.utf8)) }))

        // Epoch 8: mls-rs commits a proposal of ours (our Add, by reference).
        var grace = try OurMember("ours-grace")
        var proposer = try #require(alice.group)
        let proposal = try proposer.propose(.add(try KeyPackage.from(try grace.keyPackage())))
        alice.group = proposer
        #expect(try peer.process("ours-bob", proposal.tlsBytes)["kind"] as? String == "proposal")
        try dave.process(proposal.tlsBytes)
        try frank.process(proposal.tlsBytes)
        let bobCommitsProposal = try peer.call("commit", ["client": "ours-bob"])
        let c8 = try peer.bytes(bobCommitsProposal, "commit")
        #expect(try alice.process(c8) == .commit(epoch: 8))
        #expect(try dave.process(c8) == .commit(epoch: 8))
        #expect(try frank.process(c8) == .commit(epoch: 8))
        try grace.join(try peer.bytes(bobCommitsProposal, "welcome"))
        try expectAgreement([alice, dave, frank, grace], ["ours-bob"], epoch: 8)

        // Epoch 9: mls-rs cannot name a member we added, but it can commit our Remove
        // proposal for one (by reference): dave is removed by an mls-rs commit.
        var remover = try #require(alice.group)
        let removeDave = try remover.propose(.remove(leafIndex: try alice.leaf(of: "ours-dave")))
        alice.group = remover
        #expect(try peer.process("ours-bob", removeDave.tlsBytes)["kind"] as? String == "proposal")
        for result in [try dave.process(removeDave.tlsBytes), try frank.process(removeDave.tlsBytes), try grace.process(removeDave.tlsBytes)] {
            guard case .proposal = result else { Issue.record("expected a stored proposal, got \(result)"); continue }
        }
        let c9 = try peer.bytes(try peer.call("commit", ["client": "ours-bob"]), "commit")
        #expect(try dave.process(c9) == .removed(epoch: 9))
        #expect(try alice.process(c9) == .commit(epoch: 9))
        #expect(try frank.process(c9) == .commit(epoch: 9))
        #expect(try grace.process(c9) == .commit(epoch: 9))
        try expectAgreement([alice, frank, grace], ["ours-bob"], epoch: 9)
        let afterDave = try grace.encrypt("dave must not read this")
        #expect(try peer.decrypt("ours-bob", afterDave) == "dave must not read this")
        #expect(throws: MLSError.self) { try dave.process(afterDave) }
    }

    @Test("group created by mls-rs (tree out of band), ImprintMLS members: messages, updates, removes")
    func theirGroup() throws {
        let peer = try mlsRs()
        _ = try peer.newClient("rs-owner", ratchetTreeExtension: false)
        let gid = try #require(try peer.call("create_group", ["client": "rs-owner", "group_id": hex(Array("mls-rs made group".utf8))])["group"] as? String)
        var ann = try OurMember("rs-ann")
        var ben = try OurMember("rs-ben")

        // Epoch 1: mls-rs adds two of ours in one commit; the tree comes out of band.
        let add = try peer.call("add", ["client": "rs-owner", "key_packages": [b64(try ann.keyPackage()), b64(try ben.keyPackage())]])
        let welcome = try peer.bytes(add, "welcome")
        let tree = try peer.bytes(add, "ratchet_tree")
        #expect(throws: MLSError.self) { var probe = ann; try probe.join(welcome) }  // no tree, none supplied
        try ann.join(welcome, tree: tree)
        try ben.join(welcome, tree: tree)
        #expect(hex(ann.group!.groupID) == gid)
        try expectAgreement([ann, ben], ["rs-owner"], epoch: 1)

        // Application messages both ways.
        let fromOwner = try peer.encrypt("rs-owner", "hello from mls-rs")
        #expect(try ann.decrypt(fromOwner) == "hello from mls-rs")
        #expect(try ben.decrypt(fromOwner) == "hello from mls-rs")
        let fromAnn = try ann.encrypt("hello from ImprintMLS")
        #expect(try peer.decrypt("rs-owner", fromAnn) == "hello from ImprintMLS")
        #expect(try ben.decrypt(fromAnn) == "hello from ImprintMLS")

        // Epoch 2: we commit an UpdatePath in their group.
        let annUpdate = try ann.commit([], options: CommitOptions(forcePath: true))
        #expect(try peer.process("rs-owner", annUpdate.commit.tlsBytes)["path"] as? Bool == true)
        #expect(try ben.process(annUpdate.commit.tlsBytes) == .commit(epoch: 2))
        try expectAgreement([ann, ben], ["rs-owner"], epoch: 2)

        // Epoch 3: mls-rs commits an UpdatePath.
        let ownerUpdate = try peer.bytes(try peer.call("update", ["client": "rs-owner"]), "commit")
        #expect(try ann.process(ownerUpdate) == .commit(epoch: 3))
        #expect(try ben.process(ownerUpdate) == .commit(epoch: 3))
        try expectAgreement([ann, ben], ["rs-owner"], epoch: 3)

        // Epoch 4: we add an mls-rs client to the mls-rs group (tree in our Welcome).
        let xKP = try peer.newClient("rs-x")
        let annAdd = try ann.commit([.add(try KeyPackage.from(xKP))])
        try peer.process("rs-owner", annAdd.commit.tlsBytes)
        try ben.process(annAdd.commit.tlsBytes)
        try peer.call("join", ["client": "rs-x", "welcome": b64(MLSMessage.welcome(try #require(annAdd.welcome)).tlsBytes), "group": gid, "epoch": 4])
        try expectAgreement([ann, ben], ["rs-owner", "rs-x"], epoch: 4)

        // Epoch 5: we remove that mls-rs client; it is told, and locked out.
        let removeX = try ann.commit([.remove(leafIndex: try ann.leaf(of: "rs-x"))])
        #expect(try peer.process("rs-x", removeX.commit.tlsBytes)["removed"] as? Bool == true)
        try peer.process("rs-owner", removeX.commit.tlsBytes)
        try ben.process(removeX.commit.tlsBytes)
        try expectAgreement([ann, ben], ["rs-owner"], epoch: 5)
        let afterX = try peer.encrypt("rs-owner", "x must not read this")
        #expect(try ann.decrypt(afterX) == "x must not read this")
        #expect(try peer.send("process", ["client": "rs-x", "message": b64(afterX)])["ok"] as? Bool == false)

        // Epoch 6: we remove one of ours from the mls-rs group (PrivateMessage commit).
        let removeBen = try ann.commit([.remove(leafIndex: try ann.leaf(of: "rs-ben"))], options: CommitOptions(encrypt: true))
        #expect(try ben.process(removeBen.commit.tlsBytes) == .removed(epoch: 6))
        #expect(try peer.process("rs-owner", removeBen.commit.tlsBytes)["kind"] as? String == "commit")
        try expectAgreement([ann], ["rs-owner"], epoch: 6)
        let afterBen = try peer.encrypt("rs-owner", "ben must not read this")
        #expect(try ann.decrypt(afterBen) == "ben must not read this")
        #expect(throws: MLSError.self) { try ben.process(afterBen) }

        // mls-rs cannot remove a member it did not create (no SigningIdentity from bytes).
        let refused = try peer.send("remove", ["client": "rs-owner", "name": "rs-ann"])
        #expect(refused["ok"] as? Bool == false)
    }
}

extension KeyPackage {
    /// The KeyPackage inside an MLSMessage.
    static func from(_ message: [UInt8]) throws -> KeyPackage {
        guard case let .keyPackage(kp) = try MLSMessage(tlsBytes: message) else { throw InteropError("not a KeyPackage") }
        return kp
    }
}
