/// What a commit produced: the message for the group, and a Welcome if members were added.
public struct CommitOutput: Sendable {
    /// The commit as an MLSMessage (PublicMessage or PrivateMessage).
    public let commit: MLSMessage
    /// The Welcome for added members, if any.
    public let welcome: Welcome?
    /// The new epoch's signed GroupInfo (carries `external_pub`; `ratchet_tree` if requested).
    public let groupInfo: GroupInfo
}

/// Options for creating a commit.
public struct CommitOptions: Sendable {
    /// Always include an UpdatePath (otherwise only when required).
    public var forcePath: Bool
    /// Put the ratchet tree in the Welcome's GroupInfo (`ratchet_tree` extension).
    public var ratchetTreeInWelcome: Bool
    /// Send the commit as a PrivateMessage instead of a PublicMessage.
    public var encrypt: Bool
    public init(forcePath: Bool = false, ratchetTreeInWelcome: Bool = true, encrypt: Bool = false) {
        self.forcePath = forcePath
        self.ratchetTreeInWelcome = ratchetTreeInWelcome
        self.encrypt = encrypt
    }
}

extension KeyPackage {
    /// Creates a KeyPackage with fresh init and encryption keys.
    ///
    /// - Parameters:
    ///   - suite: the cipher suite (an unsupported one throws).
    ///   - credential: the leaf's credential (for Imprint, a basic credential naming the DID).
    ///   - signaturePrivateKey: the member's signature key (its public key goes in the leaf).
    ///   - lifetime: validity period; defaults to [now - 1h, now + 90 days] on `clock`.
    ///   - clock: the time source for the default lifetime.
    public static func create(suite: CipherSuite, credential: Credential, signaturePrivateKey: [UInt8],
                              lifetime: Lifetime? = nil, clock: MLSClock = .system) throws -> (KeyPackage, KeyPackagePrivateKeys) {
        try suite.requireSupported()
        let initKP = try suite.deriveKeyPair(ikm: CipherSuite.randomBytes(32))
        let encKP = try suite.deriveKeyPair(ikm: CipherSuite.randomBytes(32))
        let now = clock.now()
        let life = lifetime ?? Lifetime(notBefore: now &- min(now, 3600), notAfter: now &+ 90 * 86400)
        var leaf = LeafNode(encryptionKey: encKP.publicKey, signatureKey: try suite.signaturePublicKey(privateKey: signaturePrivateKey),
                            credential: credential, capabilities: MLSGroup.defaultCapabilities(suite), source: .keyPackage(life), extensions: [])
        let signer = try SignatureSigner(suite: suite, privateKey: signaturePrivateKey)
        try leaf.sign(suite: suite, signer: signer, groupID: [], leafIndex: 0)
        var kp = KeyPackage(version: 1, cipherSuite: suite, initKey: initKP.publicKey, leafNode: leaf, extensions: [], signature: [])
        kp.signature = try suite.signWithLabel(signer: signer, label: "KeyPackageTBS", content: kp.toBeSigned)
        return (kp, KeyPackagePrivateKeys(initKey: initKP.privateKey, encryptionKey: encKP.privateKey, signatureKey: signaturePrivateKey))
    }
}

extension MLSGroup {
    static func defaultCapabilities(_ suite: CipherSuite) -> Capabilities {
        Capabilities(versions: [1], cipherSuites: [suite.rawValue], extensions: [], proposals: [], credentials: [Credential.basicType, Credential.x509Type])
    }

    /// Creates a one-member group at epoch 0 (RFC 9420 §11).
    public static func create(suite: CipherSuite, groupID: [UInt8], credential: Credential, signaturePrivateKey: [UInt8],
                              extensions: [Extension] = [], configuration: MLSGroupConfiguration = .init()) throws -> MLSGroup {
        try suite.requireSupported()
        let encKP = try suite.deriveKeyPair(ikm: CipherSuite.randomBytes(32))
        var leaf = LeafNode(encryptionKey: encKP.publicKey, signatureKey: try suite.signaturePublicKey(privateKey: signaturePrivateKey),
                            credential: credential, capabilities: defaultCapabilities(suite),
                            // The creator's leaf has no KeyPackage; it uses the key_package source with an unbounded lifetime.
                            source: .keyPackage(Lifetime(notBefore: 0, notAfter: .max)), extensions: [])
        try leaf.sign(suite: suite, signaturePrivateKey: signaturePrivateKey, groupID: [], leafIndex: 0)
        let tree = RatchetTree(suite: suite, firstLeaf: leaf)
        let ctx = GroupContext(cipherSuite: suite, groupID: groupID, epoch: 0, treeHash: tree.treeHash, confirmedTranscriptHash: [], extensions: extensions)
        let initSecret = CipherSuite.randomBytes(suite.hashLength)
        let zero = [UInt8](repeating: 0, count: suite.hashLength)
        let joiner = try KeySchedule.joinerSecret(suite: suite, initSecret: initSecret, commitSecret: zero, groupContext: ctx.tlsBytes)
        let secrets = try KeySchedule.epochSecrets(suite: suite, joinerSecret: joiner, pskSecret: zero, groupContext: ctx.tlsBytes)
        let tag = suite.mac(key: secrets.confirmationKey, data: [])
        return MLSGroup(
            context: ctx, tree: tree, myLeaf: 0, signer: try SignatureSigner(suite: suite, privateKey: signaturePrivateKey),
            nodeKeys: [0: NodeKey(privateKey: encKP.privateKey, publicKey: encKP.publicKey)],
            interimTranscriptHash: KeySchedule.interimTranscriptHash(suite: suite, confirmed: [], confirmationTag: tag),
            secrets: secrets.retained,
            secretTree: SecretTree(suite: suite, encryptionSecret: secrets.encryptionSecret, leafCount: 1, limits: configuration.secretTreeLimits),
            pendingProposals: [:], resumptionPSKs: [0: secrets.resumptionPSK], externalPSKs: [:], configuration: configuration)
    }

    // MARK: Sending

    /// Encrypts application data as a PrivateMessage.
    public mutating func encrypt(_ data: [UInt8], authenticatedData: [UInt8] = []) throws -> MLSMessage {
        let framed = FramedContent(groupID: groupID, epoch: epoch, sender: .member(leafIndex: myLeaf), authenticatedData: authenticatedData, content: .application(data))
        return .privateMessage(try MessageProtection.protectPrivate(suite: cipherSuite, content: framed, confirmationTag: nil, context: context,
                                                                     signer: signer, senderDataSecret: secrets.senderDataSecret,
                                                                     secretTree: &secretTree, paddingBlock: configuration.paddingBlock))
    }

    /// Sends a proposal (stored locally too, so our next commit includes it).
    public mutating func propose(_ proposal: Proposal, encrypt: Bool = false) throws -> MLSMessage {
        let framed = FramedContent(groupID: groupID, epoch: epoch, sender: .member(leafIndex: myLeaf), authenticatedData: [], content: .proposal(proposal))
        let wf: WireFormat = encrypt ? .privateMessage : .publicMessage
        let sig = try MessageProtection.sign(suite: cipherSuite, wireFormat: wf, content: framed, context: context, signer: signer)
        let ac = AuthenticatedContent(wireFormat: wf, content: framed, auth: FramedContentAuthData(signature: sig, confirmationTag: nil))
        let message = try protect(ac)
        let ref = try cipherSuite.refHash(label: Array("MLS 1.0 Proposal Reference".utf8), value: ac.tlsBytes)
        pendingProposals[ref] = PendingProposal(proposal: proposal, sender: .member(leafIndex: myLeaf))
        return message
    }

    /// Proposes replacing our leaf with one carrying a fresh encryption key.
    public mutating func proposeUpdate(encrypt: Bool = false) throws -> MLSMessage {
        guard var leaf = tree.leaf(myLeaf) else { throw MLSError(.invalidState, "own leaf") }
        let kp = try cipherSuite.deriveKeyPair(ikm: CipherSuite.randomBytes(32))
        leaf.encryptionKey = kp.publicKey
        leaf.source = .update
        try leaf.sign(suite: cipherSuite, signer: signer, groupID: groupID, leafIndex: myLeaf)
        let message = try propose(.update(leaf), encrypt: encrypt)
        pendingUpdateKeys[kp.publicKey] = kp.privateKey
        return message
    }

    /// Frames signed content for the wire with the current epoch's keys.
    mutating func protect(_ ac: AuthenticatedContent) throws -> MLSMessage {
        switch ac.wireFormat {
        case .privateMessage:
            return .privateMessage(try MessageProtection.encryptPrivate(suite: cipherSuite, ac, senderDataSecret: secrets.senderDataSecret,
                                                                         secretTree: &secretTree, paddingBlock: configuration.paddingBlock))
        default:
            var tag: [UInt8]?
            if case .member = ac.content.sender {
                tag = MessageProtection.membershipTag(suite: cipherSuite, membershipKey: secrets.membershipKey, content: ac.content, auth: ac.auth, context: context)
            }
            return .publicMessage(PublicMessage(content: ac.content, auth: ac.auth, membershipTag: tag))
        }
    }
}

extension MLSGroup {
    /// Creates a commit of `proposals` (inline) plus every pending proposal
    /// (by reference), applies it locally and returns the messages to send.
    ///
    /// The group moves to the new epoch at once; keep the previous value if
    /// the delivery service may reject the commit.
    public mutating func commit(_ proposals: [Proposal] = [], options: CommitOptions = .init(), clock: MLSClock = .system) throws -> CommitOutput {
        let cs = cipherSuite
        var list: [(Proposal, Sender)] = []
        var refs: [ProposalOrRef] = []
        // Explicit proposals first; then pending ones that do not conflict
        // with what is already chosen (RFC 9420 §12.2: the list must be valid).
        var touched = Set<UInt32>(), addKeys = Set<[UInt8]>(), pskIDs = Set<PreSharedKeyID>(), hasGCE = false
        func admit(_ p: Proposal, sender: Sender) -> Bool {
            switch p {
            case let .remove(i):
                return i != myLeaf && touched.insert(i).inserted
            case .update:
                guard case let .member(i) = sender, i != myLeaf else { return false }
                return touched.insert(i).inserted
            case let .add(kp):
                return addKeys.insert(kp.leafNode.signatureKey).inserted
            case let .preSharedKey(id):
                return pskIDs.insert(id).inserted
            case .groupContextExtensions:
                defer { hasGCE = true }
                return !hasGCE
            case .externalInit, .reInit:
                return false
            }
        }
        let signatureChecks = try keyPackageSignatureChecks(proposals)
        let members = MemberCredentials(tree: tree)
        for (index, p) in proposals.enumerated() {
            if case .update = p { throw MLSError(.invalidProposal, "a committer updates through the path, not an Update proposal") }
            try validateStandaloneProposal(p, sender: .member(leafIndex: myLeaf), clock: clock, checked: signatureChecks[index], members: members)
            guard admit(p, sender: .member(leafIndex: myLeaf)) else { throw MLSError(.invalidProposal, "conflicting or disallowed proposal \(p.type)") }
            list.append((p, .member(leafIndex: myLeaf)))
            refs.append(.proposal(p))
        }
        // Removes are admitted before Updates so that a removed member's Update is dropped.
        let pending = pendingProposals.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        for (ref, entry) in pending.filter({ if case .remove = $0.value.proposal { true } else { false } }) + pending.filter({ if case .remove = $0.value.proposal { false } else { true } }) {
            guard admit(entry.proposal, sender: entry.sender), (try? validateStandaloneProposal(entry.proposal, sender: entry.sender, clock: clock)) != nil else { continue }
            list.append((entry.proposal, entry.sender))
            refs.append(.reference(ref))
        }
        let pathRequired = list.isEmpty || list.contains { p, _ in
            switch p {
            case .update, .remove, .groupContextExtensions, .externalInit: true
            default: false
            }
        }
        var (newTree, added, addedInOrder, newExtensions) = applyProposals(list)
        guard newTree.leaf(myLeaf) != nil else { throw MLSError(.invalidCommit, "commit removes the committer") }
        do { try newTree.checkKeyUniqueness() } catch let e as MLSError { throw MLSError(.invalidProposal, e.context) }
        if list.contains(where: { if case .groupContextExtensions = $0.0 { true } else { false } }) {
            var probe = context
            probe.extensions = newExtensions
            do { try MLSGroup.validateTreeLeaves(newTree, context: probe) } catch let e as MLSError {
                throw MLSError(.invalidProposal, "GroupContextExtensions unsupported by a member: \(e.context)")
            }
        }

        let provisional = GroupContext(cipherSuite: cs, groupID: groupID, epoch: epoch + 1, treeHash: [],
                                       confirmedTranscriptHash: context.confirmedTranscriptHash, extensions: newExtensions)
        var commitSecret = [UInt8](repeating: 0, count: cs.hashLength)
        var path: UpdatePath?
        var pathSecrets: PathSecrets?
        if pathRequired || options.forcePath {
            guard let oldLeaf = newTree.leaf(myLeaf) else { throw MLSError(.invalidState, "own leaf") }
            let (p, s) = try newTree.createUpdatePath(sender: myLeaf, newLeaf: oldLeaf, signer: signer, groupID: groupID,
                                                      excluding: added) { t in
                var c = provisional
                c.treeHash = t.treeHash
                return c.tlsBytes
            }
            path = p
            pathSecrets = s
            commitSecret = s.commitSecret
        }

        let commit = Commit(proposals: refs, path: path)
        let framed = FramedContent(groupID: groupID, epoch: epoch, sender: .member(leafIndex: myLeaf), authenticatedData: [], content: .commit(commit))
        let wf: WireFormat = options.encrypt ? .privateMessage : .publicMessage
        let sig = try MessageProtection.sign(suite: cs, wireFormat: wf, content: framed, context: context, signer: signer)
        var ac = AuthenticatedContent(wireFormat: wf, content: framed, auth: FramedContentAuthData(signature: sig, confirmationTag: nil))
        let confirmed = KeySchedule.confirmedTranscriptHash(suite: cs, interimBefore: interimTranscriptHash, content: ac)
        let newContext = GroupContext(cipherSuite: cs, groupID: groupID, epoch: epoch + 1, treeHash: newTree.treeHash,
                                      confirmedTranscriptHash: confirmed, extensions: newExtensions)
        var psks: [(id: PreSharedKeyID, psk: [UInt8])] = []
        for (p, _) in list { if case let .preSharedKey(id) = p { psks.append((id, try resolvePSK(id))) } }
        let pskSecret = try KeySchedule.pskSecret(suite: cs, psks: psks)
        let joiner = try KeySchedule.joinerSecret(suite: cs, initSecret: secrets.initSecret, commitSecret: commitSecret, groupContext: newContext.tlsBytes)
        let newSecrets = try KeySchedule.epochSecrets(suite: cs, joinerSecret: joiner, pskSecret: pskSecret, groupContext: newContext.tlsBytes)
        let tag = cs.mac(key: newSecrets.confirmationKey, data: confirmed)
        ac.auth.confirmationTag = tag
        let message = try protect(ac)

        // GroupInfo for the new epoch, signed by us.
        let externalPub = try cs.deriveKeyPair(ikm: newSecrets.externalSecret).publicKey
        var infoExtensions = [Extension(type: Extension.externalPub, data: TLSWriter.opaque(externalPub))]
        if options.ratchetTreeInWelcome { infoExtensions.insert(Extension(type: Extension.ratchetTree, data: newTree.wire.tlsBytes), at: 0) }
        var info = GroupInfo(groupContext: newContext, extensions: infoExtensions, confirmationTag: tag, signer: myLeaf)
        try info.sign(signer: signer)

        var welcome: Welcome?
        if !added.isEmpty {
            let (wkey, wnonce) = try Welcome.welcomeKeyNonce(suite: cs, welcomeSecret: newSecrets.welcomeSecret)
            let encInfo = try cs.aeadSeal(key: wkey, nonce: wnonce, aad: [], plaintext: info.tlsBytes)
            // One HPKE key-schedule setup for `info` (which embeds the ~N-sized
            // encrypted GroupInfo), then one encryption per new member, on all cores.
            let hpke = try HPKEBaseMode(suite: cs, info: CipherSuite.encryptContext(label: "Welcome", context: encInfo))
            let newMembers = Array(zip(list.compactMap { p, _ -> KeyPackage? in if case let .add(kp) = p { kp } else { nil } }, addedInOrder))
            let pskIDs = psks.map(\.id), leafCount = newTree.leafCount, me = myLeaf, ourPathSecrets = pathSecrets?.pathSecrets
            let entries = try Parallel.map(newMembers.count) { i -> EncryptedGroupSecrets in
                let (kp, li) = newMembers[i]
                var ps: [UInt8]?
                if let ourPathSecrets {
                    // The lowest node of our filtered direct path above the new member.
                    var node: UInt32? = TreeMath.commonAncestor(li * 2, me * 2)
                    while let n = node, ourPathSecrets[n] == nil { node = TreeMath.parent(n, leafCount: leafCount) }
                    ps = node.flatMap { ourPathSecrets[$0] }
                }
                let gs = GroupSecrets(joinerSecret: joiner, pathSecret: ps, psks: pskIDs)
                let ct = try hpke.seal(publicKey: kp.initKey, aad: [], plaintext: gs.tlsBytes)
                return EncryptedGroupSecrets(newMember: try kp.reference(), encryptedGroupSecrets: HPKECiphertext(kemOutput: ct.kemOutput, ciphertext: ct.ciphertext))
            }
            welcome = Welcome(cipherSuite: cs, secrets: entries, encryptedGroupInfo: encInfo)
        }

        var newKeys: [UInt32: NodeKey] = [:]
        for (node, sk) in pathSecrets?.privateKeys ?? [:] {
            newKeys[node] = NodeKey(privateKey: sk, publicKey: newTree.nodes[Int(node)]?.encryptionKey ?? [])
        }
        enterEpoch(tree: newTree, context: newContext, secrets: newSecrets, confirmationTag: tag, newKeys: newKeys)
        return CommitOutput(commit: message, welcome: welcome, groupInfo: info)
    }

    /// A signed GroupInfo for the current epoch, for external joiners.
    /// Carries `external_pub`, and the tree if `includeRatchetTree`.
    public func groupInfo(includeRatchetTree: Bool = true) throws -> GroupInfo {
        let externalPub = try cipherSuite.deriveKeyPair(ikm: secrets.externalSecret).publicKey
        var exts = [Extension(type: Extension.externalPub, data: TLSWriter.opaque(externalPub))]
        if includeRatchetTree { exts.insert(Extension(type: Extension.ratchetTree, data: tree.wire.tlsBytes), at: 0) }
        // Confirmation tag of the current epoch: MAC(confirmation_key, confirmed_transcript_hash).
        let tag = cipherSuite.mac(key: secrets.confirmationKey, data: context.confirmedTranscriptHash)
        var info = GroupInfo(groupContext: context, extensions: exts, confirmationTag: tag, signer: myLeaf)
        try info.sign(signer: signer)
        return info
    }

    /// Joins a group with an external commit (RFC 9420 §12.4.3.2) from a
    /// GroupInfo carrying `external_pub`. Returns the new group state and the
    /// commit to send to the existing members.
    ///
    /// - Parameters:
    ///   - info: the group's GroupInfo, with an `external_pub` extension.
    ///   - ratchetTree: the tree, if it is not in the GroupInfo's `ratchet_tree` extension.
    ///   - credential: the joiner's credential.
    ///   - signaturePrivateKey: the joiner's signature key.
    ///   - oldLeaf: our own old leaf, to resynchronise after losing state (it must carry
    ///     the same credential).
    ///   - configuration: the group's local settings.
    public static func joinByExternalCommit(groupInfo info: GroupInfo, ratchetTree: RatchetTreeNodes? = nil, credential: Credential,
                                            signaturePrivateKey: [UInt8], removing oldLeaf: UInt32? = nil,
                                            configuration: MLSGroupConfiguration = .init()) throws -> (MLSGroup, MLSMessage) {
        let ctx = info.groupContext
        let cs = ctx.cipherSuite
        try cs.requireSupported()
        guard ctx.version == 1 else { throw MLSError(.invalidMessage, "protocol version \(ctx.version)") }
        let treeNodes: RatchetTreeNodes
        if let ext = info.extensions.first(type: Extension.ratchetTree) { treeNodes = try RatchetTreeNodes(tlsBytes: ext.data) } else if let ratchetTree { treeNodes = ratchetTree } else {
            throw MLSError(.notFound, "no ratchet tree")
        }
        var tree = try RatchetTree(suite: cs, wire: treeNodes)
        guard tree.treeHash == ctx.treeHash else { throw MLSError(.invalidTree, "tree hash differs from GroupContext") }
        try tree.validate(groupID: ctx.groupID)
        try MLSGroup.validateTreeLeaves(tree, context: ctx)
        guard let infoSigner = tree.leaf(info.signer), try info.verifySignature(publicKey: infoSigner.signatureKey) else {
            throw MLSError(.signatureInvalid, "GroupInfo signature")
        }
        guard let extPubExt = info.extensions.first(type: Extension.externalPub) else { throw MLSError(.notFound, "no external_pub extension") }
        var r = TLSReader(extPubExt.data)
        let externalPub = try r.readOpaque()
        try r.finish()
        let (kemOutput, initSecret) = try cs.hpkeExportSender(publicKey: externalPub, info: [], exporterContext: Array("MLS 1.0 external init secret".utf8), length: cs.hashLength)

        let signer = try SignatureSigner(suite: cs, privateKey: signaturePrivateKey)
        let encKP = try cs.deriveKeyPair(ikm: CipherSuite.randomBytes(32))
        let leaf = LeafNode(encryptionKey: encKP.publicKey, signatureKey: try cs.signaturePublicKey(privateKey: signaturePrivateKey), credential: credential,
                            capabilities: defaultCapabilities(cs), source: .commit(parentHash: []), extensions: [])
        if let oldLeaf {
            guard tree.leaf(oldLeaf)?.credential == credential else { throw MLSError(.invalidProposal, "resync must remove a leaf with our credential") }
            tree.removeLeaf(oldLeaf)
        }
        let myLeaf = tree.addLeaf(leaf)
        let provisional = GroupContext(cipherSuite: cs, groupID: ctx.groupID, epoch: ctx.epoch + 1, treeHash: [],
                                       confirmedTranscriptHash: ctx.confirmedTranscriptHash, extensions: ctx.extensions)
        let (path, pathSecrets) = try tree.createUpdatePath(sender: myLeaf, newLeaf: leaf, signer: signer, groupID: ctx.groupID) { t in
            var c = provisional
            c.treeHash = t.treeHash
            return c.tlsBytes
        }
        let commit = Commit(proposals: [.proposal(.externalInit(kemOutput: kemOutput))] + (oldLeaf.map { [.proposal(.remove(leafIndex: $0))] } ?? []), path: path)
        let framed = FramedContent(groupID: ctx.groupID, epoch: ctx.epoch, sender: .newMemberCommit, authenticatedData: [], content: .commit(commit))
        let sig = try MessageProtection.sign(suite: cs, wireFormat: .publicMessage, content: framed, context: ctx, signer: signer)
        var ac = AuthenticatedContent(wireFormat: .publicMessage, content: framed, auth: FramedContentAuthData(signature: sig, confirmationTag: nil))
        let interim = KeySchedule.interimTranscriptHash(suite: cs, confirmed: ctx.confirmedTranscriptHash, confirmationTag: info.confirmationTag)
        let confirmed = KeySchedule.confirmedTranscriptHash(suite: cs, interimBefore: interim, content: ac)
        let newContext = GroupContext(cipherSuite: cs, groupID: ctx.groupID, epoch: ctx.epoch + 1, treeHash: tree.treeHash,
                                      confirmedTranscriptHash: confirmed, extensions: ctx.extensions)
        let zero = [UInt8](repeating: 0, count: cs.hashLength)
        let joiner = try KeySchedule.joinerSecret(suite: cs, initSecret: initSecret, commitSecret: pathSecrets.commitSecret, groupContext: newContext.tlsBytes)
        let secrets = try KeySchedule.epochSecrets(suite: cs, joinerSecret: joiner, pskSecret: zero, groupContext: newContext.tlsBytes)
        let tag = cs.mac(key: secrets.confirmationKey, data: confirmed)
        ac.auth.confirmationTag = tag
        var nodeKeys: [UInt32: NodeKey] = [:]
        for (node, sk) in pathSecrets.privateKeys { nodeKeys[node] = NodeKey(privateKey: sk, publicKey: tree.nodes[Int(node)]?.encryptionKey ?? []) }
        var group = MLSGroup(
            context: newContext, tree: tree, myLeaf: myLeaf, signer: signer, nodeKeys: nodeKeys,
            interimTranscriptHash: KeySchedule.interimTranscriptHash(suite: cs, confirmed: confirmed, confirmationTag: tag),
            secrets: secrets.retained,
            secretTree: SecretTree(suite: cs, encryptionSecret: secrets.encryptionSecret, leafCount: tree.leafCount, limits: configuration.secretTreeLimits),
            pendingProposals: [:], resumptionPSKs: [newContext.epoch: secrets.resumptionPSK], externalPSKs: [:], configuration: configuration)
        group.pruneNodeKeys()
        return (group, .publicMessage(PublicMessage(content: ac.content, auth: ac.auth, membershipTag: nil)))
    }
}

extension TLSWriter {
    /// The encoding of `opaque data<V>`.
    static func opaque(_ b: [UInt8]) -> [UInt8] {
        var w = TLSWriter()
        w.writeOpaque(b)
        return w.bytes
    }
}

/// A member of a group, as seen in the ratchet tree.
public struct Member: Sendable, Hashable {
    /// The member's leaf index.
    public let leafIndex: UInt32
    /// The member's credential.
    public let credential: Credential
    /// The member's signature public key.
    public let signatureKey: [UInt8]
}

extension MLSGroup {
    /// The current members, by leaf index.
    public var members: [Member] {
        tree.occupiedLeaves.compactMap { i in
            tree.leaf(i).map { Member(leafIndex: i, credential: $0.credential, signatureKey: $0.signatureKey) }
        }
    }
}
