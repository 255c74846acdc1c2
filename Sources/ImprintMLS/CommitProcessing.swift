extension MLSGroup {
    // MARK: Leaf node validation (RFC 9420 §7.3)

    /// The credential types of the current members, gathered once so that a
    /// batch of Adds is checked against them in O(1) each instead of a pass
    /// over the tree per Add.
    struct MemberCredentials: Sendable {
        /// Credential types in use.
        var inUse = Set<UInt16>()
        /// Credential types every member supports.
        var supportedByAll: Set<UInt16>?

        init(tree: RatchetTree) {
            for li in tree.occupiedLeaves {
                guard let l = tree.leaf(li) else { continue }
                inUse.insert(l.credential.type)
                let supported = Set(l.capabilities.credentials)
                supportedByAll = supportedByAll.map { $0.intersection(supported) } ?? supported
            }
        }

        /// Whether `leaf` and every member support each other's credential type.
        func compatible(with leaf: LeafNode) -> Bool {
            (supportedByAll?.contains(leaf.credential.type) ?? true) && inUse.isSubset(of: leaf.capabilities.credentials)
        }
    }

    /// Validates a LeafNode about to enter the tree at `index` (nil for an Add, whose slot is not known yet).
    /// `members`: the current members' credential types, when already gathered (used for Adds).
    func validateLeaf(_ leaf: LeafNode, replacing index: UInt32?, expectedSource: UInt8, clock: MLSClock, checkUniqueness: Bool = true,
                      members: MemberCredentials? = nil) throws {
        guard leaf.source.code == expectedSource else { throw MLSError(.invalidLeafNode, "leaf_node_source \(leaf.source.code)") }
        if case let .keyPackage(lifetime) = leaf.source {
            let now = clock.now()
            guard lifetime.notBefore <= now, now <= lifetime.notAfter else { throw MLSError(.invalidLeafNode, "lifetime does not cover now") }
        }
        guard leaf.capabilities.credentials.contains(leaf.credential.type) else {
            throw MLSError(.invalidLeafNode, "credential type not in own capabilities")
        }
        for e in leaf.extensions where !Extension.isDefault(e.type) && !leaf.capabilities.extensions.contains(e.type) {
            throw MLSError(.invalidLeafNode, "extension \(e.type) not in capabilities")
        }
        for e in context.extensions where !Extension.isDefault(e.type) && !leaf.capabilities.extensions.contains(e.type) {
            throw MLSError(.invalidLeafNode, "group extension \(e.type) not supported by the leaf")
        }
        if let rc = context.extensions.first(type: Extension.requiredCapabilities) {
            let req = try RequiredCapabilities(tlsBytes: rc.data)
            for e in req.extensions where !Extension.isDefault(e) && !leaf.capabilities.extensions.contains(e) {
                throw MLSError(.invalidLeafNode, "required extension \(e) unsupported")
            }
            for p in req.proposals where p > 7 && !leaf.capabilities.proposals.contains(p) {
                throw MLSError(.invalidLeafNode, "required proposal \(p) unsupported")
            }
            for c in req.credentials where !leaf.capabilities.credentials.contains(c) {
                throw MLSError(.invalidLeafNode, "required credential \(c) unsupported")
            }
        }
        if index == nil, !checkUniqueness, let members {
            guard members.compatible(with: leaf) else { throw MLSError(.invalidLeafNode, "credential type not supported by all members") }
            return
        }
        for li in 0 ..< tree.leafCount where li != index {
            guard let other = tree.leaf(li) else { continue }
            guard other.capabilities.credentials.contains(leaf.credential.type), leaf.capabilities.credentials.contains(other.credential.type) else {
                throw MLSError(.invalidLeafNode, "credential type not supported by all members")
            }
            guard checkUniqueness else { continue }
            guard other.signatureKey != leaf.signatureKey else { throw MLSError(.invalidLeafNode, "signature key already in the tree") }
            guard other.encryptionKey != leaf.encryptionKey else { throw MLSError(.invalidLeafNode, "encryption key already in the tree") }
        }
        for i in stride(from: 1, to: tree.nodes.count, by: 2) where checkUniqueness {
            if let p = tree.parentNode(UInt32(i)), p.encryptionKey == leaf.encryptionKey {
                throw MLSError(.invalidLeafNode, "encryption key already in the tree")
            }
        }
    }

    /// Leaf-node compatibility checks (RFC 9420 §7.3) over every leaf of a
    /// tree received when joining: credential types supported both ways,
    /// leaf extensions listed in capabilities, group extensions and required
    /// capabilities supported. (Lifetimes are not re-checked here.)
    static func validateTreeLeaves(_ tree: RatchetTree, context: GroupContext) throws {
        let leaves = tree.occupiedLeaves.compactMap { tree.leaf($0) }
        let required = try context.extensions.first(type: Extension.requiredCapabilities).map { try RequiredCapabilities(tlsBytes: $0.data) }
        for leaf in leaves {
            let caps = leaf.capabilities
            guard caps.credentials.contains(leaf.credential.type) else { throw MLSError(.invalidLeafNode, "credential type not in own capabilities") }
            for e in leaf.extensions where !Extension.isDefault(e.type) && !caps.extensions.contains(e.type) {
                throw MLSError(.invalidLeafNode, "leaf extension \(e.type) not in capabilities")
            }
            for e in context.extensions where !Extension.isDefault(e.type) && !caps.extensions.contains(e.type) {
                throw MLSError(.invalidLeafNode, "group extension \(e.type) not supported by a member")
            }
            if let required {
                for e in required.extensions where !Extension.isDefault(e) && !caps.extensions.contains(e) {
                    throw MLSError(.invalidLeafNode, "required extension \(e) unsupported")
                }
                for p in required.proposals where p > 7 && !caps.proposals.contains(p) {
                    throw MLSError(.invalidLeafNode, "required proposal \(p) unsupported")
                }
                for c in required.credentials where !caps.credentials.contains(c) {
                    throw MLSError(.invalidLeafNode, "required credential \(c) unsupported")
                }
            }
        }
        let types = Set(leaves.map(\.credential.type))
        for leaf in leaves where !types.isSubset(of: Set(leaf.capabilities.credentials)) {
            throw MLSError(.invalidLeafNode, "a member does not support every credential type in use")
        }
    }

    /// The signature checks of every Add's KeyPackage, verified in parallel,
    /// by position in `proposals` (consumed by ``validateStandaloneProposal``).
    func keyPackageSignatureChecks(_ proposals: [Proposal]) throws -> [Int: KeyPackage.SignatureChecks] {
        let adds = proposals.enumerated().compactMap { i, p -> (Int, KeyPackage)? in if case let .add(kp) = p { (i, kp) } else { nil } }
        let suite = cipherSuite
        let checks = try Parallel.map(adds.count) { adds[$0].1.signatureChecks(suite: suite) }
        var out: [Int: KeyPackage.SignatureChecks] = [:]
        for ((i, _), c) in zip(adds, checks) { out[i] = c }
        return out
    }

    /// Checks applied to a proposal when it is received on its own.
    /// `checked`: an Add's KeyPackage signatures, if already verified.
    /// `members`: the current members' credential types, if already gathered.
    func validateStandaloneProposal(_ p: Proposal, sender: Sender, clock: MLSClock, checked: KeyPackage.SignatureChecks? = nil,
                                    members: MemberCredentials? = nil) throws {
        switch p {
        case let .add(kp):
            try kp.validate(suite: cipherSuite, now: clock.now(), checked: checked)
            // Uniqueness against current members is a proposal-list property (a
            // Remove in the same commit may free the key): checked on the result.
            try validateLeaf(kp.leafNode, replacing: nil, expectedSource: 1, clock: clock, checkUniqueness: false, members: members)
        case let .update(leaf):
            guard case let .member(idx) = sender else { throw MLSError(.invalidProposal, "Update from a non-member") }
            guard try leaf.verifySignature(suite: cipherSuite, groupID: groupID, leafIndex: idx) else {
                throw MLSError(.signatureInvalid, "Update leaf signature")
            }
            guard leaf.encryptionKey != tree.leaf(idx)?.encryptionKey else { throw MLSError(.invalidProposal, "Update keeps the encryption key") }
            try validateLeaf(leaf, replacing: idx, expectedSource: 2, clock: clock)
        case let .remove(idx):
            guard tree.leaf(idx) != nil else { throw MLSError(.invalidProposal, "Remove of blank leaf \(idx)") }
        case let .preSharedKey(id):
            guard id.nonce.count == cipherSuite.hashLength else { throw MLSError(.invalidProposal, "psk_nonce length") }
        case .groupContextExtensions, .externalInit:
            break
        case .reInit:
            throw MLSError(.invalidProposal, "ReInit is not supported")
        }
    }

    // MARK: Commit processing (RFC 9420 §12.4.2)

    mutating func applyCommit(_ commit: Commit, authenticated ac: AuthenticatedContent, clock: MLSClock) throws {
        let cs = cipherSuite
        let committer: UInt32?
        switch ac.content.sender {
        case let .member(i): committer = i
        case .newMemberCommit: committer = nil
        default: throw MLSError(.invalidCommit, "commit sender type")
        }
        if committer == myLeaf { throw MLSError(.invalidState, "cannot process own commit; use the pending commit") }

        // Resolve proposals.
        var proposals: [(Proposal, Sender)] = []
        for por in commit.proposals {
            switch por {
            case let .proposal(p):
                proposals.append((p, ac.content.sender))
            case let .reference(ref):
                guard committer != nil else { throw MLSError(.invalidCommit, "external commit may not reference proposals") }
                guard let pending = pendingProposals[ref] else { throw MLSError(.notFound, "unknown proposal reference") }
                proposals.append((pending.proposal, pending.sender))
            }
        }

        // Validate the proposal list (RFC 9420 §12.2).
        var touched = Set<UInt32>(), pskIDs = Set<PreSharedKeyID>(), addKeys = Set<[UInt8]>()
        var gceCount = 0, externalInits: [[UInt8]] = []
        var pathRequired = proposals.isEmpty
        let signatureChecks = try keyPackageSignatureChecks(proposals.map(\.0))
        let members = MemberCredentials(tree: tree)
        for (index, (p, sender)) in proposals.enumerated() {
            switch p {
            case .update:
                guard case let .member(i) = sender, i != committer else { throw MLSError(.invalidCommit, "Update from the committer or a non-member") }
                guard touched.insert(i).inserted else { throw MLSError(.invalidCommit, "several Update/Remove for leaf \(i)") }
                pathRequired = true
            case let .remove(i):
                guard i != committer else { throw MLSError(.invalidCommit, "committer removes itself") }
                guard touched.insert(i).inserted else { throw MLSError(.invalidCommit, "several Update/Remove for leaf \(i)") }
                pathRequired = true
            case let .add(kp):
                guard addKeys.insert(kp.leafNode.signatureKey).inserted else { throw MLSError(.invalidCommit, "duplicate Add") }
            case let .preSharedKey(id):
                guard pskIDs.insert(id).inserted else { throw MLSError(.invalidCommit, "duplicate PSK") }
            case .groupContextExtensions:
                gceCount += 1
                pathRequired = true
            case let .externalInit(kemOutput):
                guard committer == nil else { throw MLSError(.invalidCommit, "ExternalInit in a member commit") }
                externalInits.append(kemOutput)
                pathRequired = true
            case .reInit:
                throw MLSError(.invalidCommit, "ReInit is not supported")
            }
            if committer == nil {
                switch p {
                case .externalInit, .remove, .preSharedKey: break
                default: throw MLSError(.invalidCommit, "external commit may only carry ExternalInit, Remove and PSK proposals")
                }
            }
            try validateStandaloneProposal(p, sender: sender, clock: clock, checked: signatureChecks[index], members: members)
        }
        guard gceCount <= 1 else { throw MLSError(.invalidCommit, "several GroupContextExtensions") }
        if committer == nil {
            guard externalInits.count == 1 else { throw MLSError(.invalidCommit, "external commit needs one ExternalInit") }
            guard proposals.filter({ if case .remove = $0.0 { true } else { false } }).count <= 1 else {
                throw MLSError(.invalidCommit, "external commit with more than one Remove")
            }
        }
        if pathRequired, commit.path == nil { throw MLSError(.invalidCommit, "path required") }

        // Apply proposals to a copy of the tree: GCE, Update, Remove, Add.
        var (newTree, added, _, newExtensions) = applyProposals(proposals)
        // Removed (our slot may already hold a new member added by the same commit).
        if proposals.contains(where: { if case .remove(myLeaf) = $0.0 { true } else { false } }) || newTree.leaf(myLeaf) == nil {
            throw MLSError(.removedFromGroup, "this commit removes us")
        }
        do { try newTree.checkKeyUniqueness() } catch let e as MLSError { throw MLSError(.invalidCommit, e.context) }
        // All members must support the new group context extensions (and any
        // required_capabilities among them).
        if gceCount == 1 {
            var probe = context
            probe.extensions = newExtensions
            do { try MLSGroup.validateTreeLeaves(newTree, context: probe) } catch let e as MLSError {
                throw MLSError(.invalidCommit, "GroupContextExtensions unsupported by a member: \(e.context)")
            }
        }

        // Path.
        let confirmedHash = KeySchedule.confirmedTranscriptHash(suite: cs, interimBefore: interimTranscriptHash, content: ac)
        var commitSecret = [UInt8](repeating: 0, count: cs.hashLength)
        var newKeys: [UInt32: NodeKey] = [:]
        let sender: UInt32
        if let committer { sender = committer } else {
            guard let path = commit.path else { throw MLSError(.invalidCommit, "external commit without path") }
            // A Remove in an external commit may only remove the joiner's old leaf (same credential).
            for (p, _) in proposals {
                if case let .remove(i) = p, tree.leaf(i)?.credential != path.leafNode.credential {
                    throw MLSError(.invalidCommit, "external commit removes another member")
                }
            }
            sender = newTree.addLeaf(path.leafNode)
        }
        var provisional = GroupContext(cipherSuite: cs, groupID: groupID, epoch: epoch + 1, treeHash: [],
                                       confirmedTranscriptHash: context.confirmedTranscriptHash, extensions: newExtensions)
        if let path = commit.path {
            var probe = self
            probe.tree = newTree
            probe.context.extensions = newExtensions
            try probe.validateLeaf(path.leafNode, replacing: sender, expectedSource: 3, clock: clock)
            if committer != nil, path.leafNode.encryptionKey == newTree.leaf(sender)?.encryptionKey {
                throw MLSError(.invalidCommit, "UpdatePath keeps the committer's encryption key")
            }
            try newTree.mergeUpdatePath(sender: sender, path: path, groupID: groupID, excluding: added)
            do { try newTree.checkKeyUniqueness() } catch let e as MLSError { throw MLSError(.invalidCommit, e.context) }
            provisional.treeHash = newTree.treeHash
            var keys = privateKeys
            // If this commit applies our own Update, our leaf now has the new key.
            if let mine = newTree.leaf(myLeaf), let sk = pendingUpdateKeys[mine.encryptionKey] { keys.keys[myLeaf * 2] = sk }
            let result = try newTree.decryptPath(sender: sender, path: path, me: myLeaf, privateKeys: keys,
                                                 groupContext: provisional.tlsBytes, excluding: added)
            commitSecret = result.commitSecret
            for (node, sk) in result.privateKeys {
                newKeys[node] = NodeKey(privateKey: sk, publicKey: newTree.nodes[Int(node)]?.encryptionKey ?? [])
            }
        }
        let newContext = GroupContext(cipherSuite: cs, groupID: groupID, epoch: epoch + 1, treeHash: newTree.treeHash,
                                      confirmedTranscriptHash: confirmedHash, extensions: newExtensions)

        // PSKs, in proposal order.
        var psks: [(id: PreSharedKeyID, psk: [UInt8])] = []
        for (p, _) in proposals {
            guard case let .preSharedKey(id) = p else { continue }
            psks.append((id, try resolvePSK(id)))
        }
        let pskSecret = try KeySchedule.pskSecret(suite: cs, psks: psks)

        // init_secret: from the previous epoch or, for an external commit, from ExternalInit.
        var initSecret = secrets.initSecret
        if committer == nil {
            let externalPriv = try cs.deriveKeyPair(ikm: secrets.externalSecret).privateKey
            initSecret = try cs.hpkeExport(privateKey: externalPriv, kemOutput: externalInits[0], info: [],
                                           exporterContext: Array("MLS 1.0 external init secret".utf8), length: cs.hashLength)
        }
        let joiner = try KeySchedule.joinerSecret(suite: cs, initSecret: initSecret, commitSecret: commitSecret, groupContext: newContext.tlsBytes)
        let newSecrets = try KeySchedule.epochSecrets(suite: cs, joinerSecret: joiner, pskSecret: pskSecret, groupContext: newContext.tlsBytes)
        guard let tag = ac.auth.confirmationTag, constantTimeEqual(cs.mac(key: newSecrets.confirmationKey, data: confirmedHash), tag) else {
            throw MLSError(.confirmationTagInvalid, "commit confirmation tag")
        }

        enterEpoch(tree: newTree, context: newContext, secrets: newSecrets, confirmationTag: tag, newKeys: newKeys)
    }

    /// Applies proposals in RFC order (GCE, Update, Remove, Add) to a copy of
    /// the tree. Returns the new tree (tree hashes refreshed), the leaves
    /// added (as a set, and in the order of the Add proposals) and the new
    /// group context extensions.
    func applyProposals(_ proposals: [(Proposal, Sender)]) -> (tree: RatchetTree, added: Set<UInt32>, addedInOrder: [UInt32], extensions: [Extension]) {
        var newTree = tree
        var newExtensions = context.extensions
        for (p, _) in proposals { if case let .groupContextExtensions(e) = p { newExtensions = e } }
        for (p, sender) in proposals { if case let .update(leaf) = p, case let .member(i) = sender { newTree.updateLeaf(i, leaf) } }
        for (p, _) in proposals { if case let .remove(i) = p { newTree.removeLeaf(i) } }
        var addedInOrder: [UInt32] = []
        var cursor: UInt32 = 0
        for (p, _) in proposals { if case let .add(kp) = p { addedInOrder.append(newTree.addLeaf(kp.leafNode, searchingFrom: &cursor)) } }
        newTree.refreshTreeHashes()
        return (newTree, Set(addedInOrder), addedInOrder, newExtensions)
    }

    func resolvePSK(_ id: PreSharedKeyID) throws -> [UInt8] {
        guard id.nonce.count == cipherSuite.hashLength else { throw MLSError(.invalidProposal, "psk_nonce length") }
        switch id.kind {
        case let .external(pskID):
            guard let psk = externalPSKs[pskID] else { throw MLSError(.notFound, "unknown external PSK") }
            return psk
        case let .resumption(usage, gid, e):
            guard usage == 1 else { throw MLSError(.invalidProposal, "resumption PSK usage \(usage) outside ReInit/branch") }
            guard gid == groupID, let psk = resumptionPSKs[e] else { throw MLSError(.notFound, "resumption PSK for epoch \(e) not available") }
            return psk
        }
    }
}
