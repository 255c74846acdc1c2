/// The outcome of processing an incoming message with ``MLSGroup/process(_:clock:)``.
public enum ProcessedMessage: Sendable, Hashable {
    /// Application data from a member.
    case application(data: [UInt8], sender: UInt32, authenticatedData: [UInt8])
    /// A proposal, stored until a commit references it.
    case proposal(reference: [UInt8])
    /// A commit, applied; the group is now in `epoch`.
    case commit(epoch: UInt64)
    /// A valid (signed, and tagged where applicable) commit of `epoch` that
    /// removes us. The group state is left as it was and is of no further use.
    case removed(epoch: UInt64)
}

/// A member's state of one MLS group at its current epoch.
///
/// Value type: every mutating operation either succeeds and moves the state
/// forward, or throws and leaves it unchanged.
public struct MLSGroup: Sendable {
    /// The current GroupContext.
    public internal(set) var context: GroupContext
    /// The current ratchet tree.
    public internal(set) var tree: RatchetTree
    /// Our leaf index.
    public internal(set) var myLeaf: UInt32
    /// Our signature key, ready to sign.
    var signer: SignatureSigner
    var signaturePrivateKey: [UInt8] { signer.privateKey }
    /// HPKE private keys by node index, with the public key they belong to.
    var nodeKeys: [UInt32: NodeKey]
    var interimTranscriptHash: [UInt8]
    var secrets: EpochSecrets
    var secretTree: SecretTree
    /// Proposals received this epoch, by ProposalRef.
    var pendingProposals: [[UInt8]: PendingProposal]
    /// Resumption PSKs of recent epochs (bounded by the configuration window).
    var resumptionPSKs: [UInt64: [UInt8]]
    /// External PSKs known to this member, by PSK id.
    var externalPSKs: [[UInt8]: [UInt8]]
    /// Recent past epochs, kept only to decrypt late application messages.
    var pastEpochs: [UInt64: PastEpoch] = [:]
    /// Private keys of our own Update proposals this epoch, by public key.
    var pendingUpdateKeys: [[UInt8]: [UInt8]] = [:]
    public var configuration: MLSGroupConfiguration

    struct NodeKey: Sendable, Hashable, Codable {
        var privateKey: [UInt8]
        var publicKey: [UInt8]
    }

    /// What is kept of a past epoch: enough to decrypt and authenticate
    /// application messages sent in it, nothing more.
    struct PastEpoch: Sendable, Hashable {
        var context: GroupContext
        var senderDataSecret: [UInt8]
        var secretTree: SecretTree
        var signatureKeys: [UInt32: [UInt8]]
    }

    struct PendingProposal: Sendable, Hashable {
        var proposal: Proposal
        var sender: Sender
    }

    public var cipherSuite: CipherSuite { context.cipherSuite }
    /// The current epoch.
    public var epoch: UInt64 { context.epoch }
    /// The group id.
    public var groupID: [UInt8] { context.groupID }
    /// The epoch_authenticator of the current epoch.
    public var epochAuthenticator: [UInt8] { secrets.epochAuthenticator }

    /// MLS-Exporter (RFC 9420 §8.5).
    public func exportSecret(label: String, context exportContext: [UInt8], length: Int) throws -> [UInt8] {
        try KeySchedule.export(suite: cipherSuite, exporterSecret: secrets.exporterSecret, label: Array(label.utf8), context: exportContext, length: length)
    }

    /// Registers an external PSK usable by commits and Welcomes.
    public mutating func addExternalPSK(id: [UInt8], secret: [UInt8]) {
        externalPSKs[id] = secret
    }

    var privateKeys: TreePrivateKeys {
        TreePrivateKeys(keys: nodeKeys.mapValues(\.privateKey))
    }

    /// Drops private keys whose node no longer carries the matching public key.
    mutating func pruneNodeKeys() {
        nodeKeys = nodeKeys.filter { node, key in
            Int(node) < tree.nodes.count && tree.nodes[Int(node)]?.encryptionKey == key.publicKey
        }
    }

    /// Moves to a new epoch. The old epoch's secrets are dropped, except what
    /// decrypts late application messages, kept for `pastEpochWindow` epochs.
    mutating func enterEpoch(tree newTree: RatchetTree, context newContext: GroupContext, secrets newSecrets: EpochSecrets,
                             confirmationTag: [UInt8], newKeys: [UInt32: NodeKey]) {
        let cs = cipherSuite
        if configuration.pastEpochWindow > 0 {
            var keys: [UInt32: [UInt8]] = [:]
            for li in tree.occupiedLeaves { keys[li] = tree.leaf(li)?.signatureKey }
            pastEpochs[context.epoch] = PastEpoch(context: context, senderDataSecret: secrets.senderDataSecret, secretTree: secretTree, signatureKeys: keys)
        }
        let window = UInt64(max(0, configuration.pastEpochWindow))
        pastEpochs = pastEpochs.filter { $0.key + window >= newContext.epoch }
        tree = newTree
        tree.refreshTreeHashes()
        context = newContext
        secrets = newSecrets.retained
        interimTranscriptHash = KeySchedule.interimTranscriptHash(suite: cs, confirmed: newContext.confirmedTranscriptHash, confirmationTag: confirmationTag)
        secretTree = SecretTree(suite: cs, encryptionSecret: newSecrets.encryptionSecret, leafCount: newTree.leafCount, limits: configuration.secretTreeLimits)
        pendingProposals = [:]
        for (node, key) in newKeys { nodeKeys[node] = key }
        if let mine = tree.leaf(myLeaf), let sk = pendingUpdateKeys[mine.encryptionKey] {
            nodeKeys[myLeaf * 2] = NodeKey(privateKey: sk, publicKey: mine.encryptionKey)
        }
        pendingUpdateKeys = [:]
        pruneNodeKeys()
        resumptionPSKs[newContext.epoch] = newSecrets.resumptionPSK
        let keep = UInt64(max(0, configuration.resumptionPSKWindow))
        resumptionPSKs = resumptionPSKs.filter { $0.key + keep >= newContext.epoch }
    }

    /// Decrypts an application message of a retained past epoch.
    mutating func processPastEpoch(_ m: PrivateMessage) throws -> ProcessedMessage {
        guard m.groupID == groupID else { throw MLSError(.wrongGroup, "group id") }
        // Only the fields needed are read out, so that the epoch's secret tree is
        // then modified in place in the dictionary (no copy of its ratchets).
        guard let keys = pastEpochs[m.epoch]?.signatureKeys, let senderDataSecret = pastEpochs[m.epoch]?.senderDataSecret,
              let pastContext = pastEpochs[m.epoch]?.context else {
            throw MLSError(.wrongEpoch, "epoch \(m.epoch) is not available")
        }
        guard m.contentType == .application else { throw MLSError(.wrongEpoch, "handshake message for a past epoch") }
        let suite = cipherSuite, group = groupID
        let ac = try MessageProtection.unprotectPrivate(suite: suite, m, groupID: group, epoch: m.epoch,
                                                        senderDataSecret: senderDataSecret, secretTree: &pastEpochs[m.epoch]!.secretTree,
                                                        isMember: { keys[$0] != nil })
        guard case let .member(leaf) = ac.content.sender, let key = keys[leaf], case let .application(data) = ac.content.content else {
            throw MLSError(.invalidMessage, "past-epoch message sender")
        }
        try MessageProtection.verifySignature(suite: cipherSuite, ac, context: pastContext, signaturePublicKey: key)
        return .application(data: data, sender: leaf, authenticatedData: ac.content.authenticatedData)
    }

    // MARK: Joining

    /// Joins a group from a Welcome (RFC 9420 §12.4.3.1).
    ///
    /// - Parameters:
    ///   - welcome: the Welcome that adds this member.
    ///   - keyPackage: the key package the Welcome was made for.
    ///   - privateKeys: that key package's private keys.
    ///   - ratchetTree: the tree, if it is not in the GroupInfo's `ratchet_tree` extension.
    ///   - externalPSKs: external PSKs by id, for PSKs the Welcome lists.
    ///   - configuration: the group's local settings.
    public static func join(welcome: Welcome, keyPackage: KeyPackage, privateKeys: KeyPackagePrivateKeys,
                            ratchetTree: RatchetTreeNodes? = nil, externalPSKs: [[UInt8]: [UInt8]] = [:],
                            configuration: MLSGroupConfiguration = .init()) throws -> MLSGroup {
        let cs = welcome.cipherSuite
        try cs.requireSupported()
        guard keyPackage.cipherSuite == cs else { throw MLSError(.invalidMessage, "Welcome cipher suite differs from KeyPackage") }
        let gs = try welcome.decryptGroupSecrets(keyPackageRef: try keyPackage.reference(), initPrivateKey: privateKeys.initKey)
        guard gs.joinerSecret.count == cs.hashLength else { throw MLSError(.invalidMessage, "joiner_secret length") }
        var psks: [(id: PreSharedKeyID, psk: [UInt8])] = []
        for id in gs.psks {
            guard case let .external(pskID) = id.kind else {
                throw MLSError(.notFound, "resumption PSK in Welcome is not available to a new member")
            }
            guard let psk = externalPSKs[pskID] else { throw MLSError(.notFound, "unknown external PSK") }
            psks.append((id, psk))
        }
        let pskSecret = try KeySchedule.pskSecret(suite: cs, psks: psks)
        let welcomeSecret = try KeySchedule.welcomeSecret(suite: cs, joinerSecret: gs.joinerSecret, pskSecret: pskSecret)
        let info = try welcome.decryptGroupInfo(welcomeSecret: welcomeSecret)
        let ctx = info.groupContext
        guard ctx.version == 1 else { throw MLSError(.invalidMessage, "protocol version") }

        let treeNodes: RatchetTreeNodes
        if let ext = info.extensions.first(type: Extension.ratchetTree) {
            treeNodes = try RatchetTreeNodes(tlsBytes: ext.data)
        } else if let ratchetTree {
            treeNodes = ratchetTree
        } else {
            throw MLSError(.notFound, "no ratchet tree in the Welcome and none supplied")
        }
        let tree = try RatchetTree(suite: cs, wire: treeNodes)
        guard tree.treeHash == ctx.treeHash else { throw MLSError(.invalidTree, "tree hash differs from GroupContext") }
        try tree.validate(groupID: ctx.groupID)
        try MLSGroup.validateTreeLeaves(tree, context: ctx)
        guard let signer = tree.leaf(info.signer) else { throw MLSError(.invalidMessage, "GroupInfo signer leaf is blank") }
        guard try info.verifySignature(publicKey: signer.signatureKey) else { throw MLSError(.signatureInvalid, "GroupInfo signature") }
        guard let myLeaf = (0 ..< tree.leafCount).first(where: { tree.leaf($0) == keyPackage.leafNode }) else {
            throw MLSError(.notFound, "our leaf is not in the tree")
        }
        for e in ctx.extensions where !Extension.isDefault(e.type) && !keyPackage.leafNode.capabilities.extensions.contains(e.type) {
            throw MLSError(.invalidMessage, "group extension \(e.type) is not in our capabilities")
        }
        guard try cs.hpkePublicKey(privateKey: privateKeys.encryptionKey) == keyPackage.leafNode.encryptionKey else {
            throw MLSError(.invalidKey, "encryption private key does not match the KeyPackage")
        }
        var nodeKeys: [UInt32: NodeKey] = [myLeaf * 2: NodeKey(privateKey: privateKeys.encryptionKey, publicKey: keyPackage.leafNode.encryptionKey)]
        if let pathSecret = gs.pathSecret {
            let ancestor = TreeMath.commonAncestor(myLeaf * 2, info.signer * 2)
            var secret = pathSecret
            var node: UInt32? = ancestor
            while let n = node {
                if let pn = tree.parentNode(n) {
                    let kp = try RatchetTree.nodeKeyPair(suite: cs, pathSecret: secret)
                    guard kp.publicKey == pn.encryptionKey else { throw MLSError(.invalidMessage, "path_secret does not match the tree") }
                    nodeKeys[n] = NodeKey(privateKey: kp.privateKey, publicKey: kp.publicKey)
                    secret = try cs.deriveSecret(secret: secret, label: "path")
                }
                node = TreeMath.parent(n, leafCount: tree.leafCount)
            }
        }
        let secrets = try KeySchedule.epochSecrets(suite: cs, joinerSecret: gs.joinerSecret, pskSecret: pskSecret, groupContext: ctx.tlsBytes)
        guard constantTimeEqual(cs.mac(key: secrets.confirmationKey, data: ctx.confirmedTranscriptHash), info.confirmationTag) else {
            throw MLSError(.confirmationTagInvalid, "GroupInfo confirmation tag")
        }
        var group = MLSGroup(
            context: ctx, tree: tree, myLeaf: myLeaf, signer: try SignatureSigner(suite: cs, privateKey: privateKeys.signatureKey), nodeKeys: nodeKeys,
            interimTranscriptHash: KeySchedule.interimTranscriptHash(suite: cs, confirmed: ctx.confirmedTranscriptHash, confirmationTag: info.confirmationTag),
            secrets: secrets.retained,
            secretTree: SecretTree(suite: cs, encryptionSecret: secrets.encryptionSecret, leafCount: tree.leafCount, limits: configuration.secretTreeLimits),
            pendingProposals: [:], resumptionPSKs: [ctx.epoch: secrets.resumptionPSK], externalPSKs: externalPSKs,
            configuration: configuration)
        group.pruneNodeKeys()
        return group
    }

    // MARK: Receiving

    /// Processes an incoming PublicMessage or PrivateMessage.
    public mutating func process(_ message: MLSMessage, clock: MLSClock = .system) throws -> ProcessedMessage {
        let ac: AuthenticatedContent
        switch message {
        case let .publicMessage(m):
            ac = try MessageProtection.unprotectPublic(suite: cipherSuite, m, context: context, membershipKey: secrets.membershipKey)
        case let .privateMessage(m) where m.epoch < epoch:
            return try processPastEpoch(m)
        case let .privateMessage(m):
            let t = tree
            // Consumes the message's key in place once the message opens (a
            // message that fails to open changes nothing); the key stays
            // deleted whatever the outcome below. Working on `secretTree` in
            // place, not on a copy, keeps this O(1) in the number of senders.
            ac = try MessageProtection.unprotectPrivate(suite: cipherSuite, m, groupID: groupID, epoch: epoch,
                                                        senderDataSecret: secrets.senderDataSecret, secretTree: &secretTree,
                                                        isMember: { t.leaf($0) != nil })
        default:
            throw MLSError(.invalidMessage, "not a framed message")
        }
        try verifySender(ac)
        switch ac.content.content {
        case let .application(data):
            guard case let .member(leaf) = ac.content.sender, ac.wireFormat == .privateMessage else {
                throw MLSError(.invalidMessage, "application data must be a PrivateMessage from a member")
            }
            return .application(data: data, sender: leaf, authenticatedData: ac.content.authenticatedData)
        case let .proposal(p):
            let ref = try cipherSuite.refHash(label: Array("MLS 1.0 Proposal Reference".utf8), value: ac.tlsBytes)
            try validateStandaloneProposal(p, sender: ac.content.sender, clock: clock)
            pendingProposals[ref] = PendingProposal(proposal: p, sender: ac.content.sender)
            return .proposal(reference: ref)
        case let .commit(c):
            var next = self
            do {
                try next.applyCommit(c, authenticated: ac, clock: clock)
            } catch let e as MLSError where e.code == .removedFromGroup {
                return .removed(epoch: epoch + 1)
            }
            self = next
            return .commit(epoch: epoch)
        }
    }

    /// Checks the signature and sender type of authenticated content.
    func verifySender(_ ac: AuthenticatedContent) throws {
        try senderSignatureCheck(ac).verify(suite: cipherSuite)
    }

    /// Checks the sender type of authenticated content and returns the signature it must
    /// carry (the sender's key over the content), not yet verified.
    func senderSignatureCheck(_ ac: AuthenticatedContent) throws -> SignatureCheck {
        let key: [UInt8]
        switch ac.content.sender {
        case let .member(leaf):
            guard let l = tree.leaf(leaf) else { throw MLSError(.invalidMessage, "sender leaf \(leaf) is blank") }
            key = l.signatureKey
        case let .external(index):
            guard ac.wireFormat == .publicMessage, case let .proposal(p) = ac.content.content else {
                throw MLSError(.invalidMessage, "external sender may only send PublicMessage proposals")
            }
            switch p {
            case .add, .remove, .preSharedKey, .reInit, .groupContextExtensions: break
            case .update, .externalInit: throw MLSError(.invalidProposal, "proposal type \(p.type) not allowed from an external sender")
            }
            guard let ext = context.extensions.first(type: Extension.externalSenders) else {
                throw MLSError(.invalidMessage, "no external_senders extension")
            }
            var r = TLSReader(ext.data)
            let senders: [ExternalSender] = try r.readList()
            try r.finish()
            guard Int(index) < senders.count else { throw MLSError(.invalidMessage, "unknown external sender") }
            key = senders[Int(index)].signatureKey
        case .newMemberProposal:
            guard ac.wireFormat == .publicMessage, case let .proposal(.add(kp)) = ac.content.content else {
                throw MLSError(.invalidMessage, "new_member_proposal must be a PublicMessage Add")
            }
            key = kp.leafNode.signatureKey
        case .newMemberCommit:
            guard ac.wireFormat == .publicMessage, case let .commit(c) = ac.content.content, let path = c.path else {
                throw MLSError(.invalidMessage, "new_member_commit must be a PublicMessage commit with a path")
            }
            key = path.leafNode.signatureKey
        }
        if ac.content.content.contentType == .commit, ac.auth.confirmationTag == nil {
            throw MLSError(.invalidMessage, "commit without confirmation tag")
        }
        return SignatureCheck(ac, context: context, publicKey: key)
    }
}

extension MLSClock {
    /// The system clock.
    public static let system = MLSClock { UInt64(max(0, Int64(Date().timeIntervalSince1970))) }
}

import struct Foundation.Date
