/// Versioned binary serialization of ``MLSGroup`` state.
///
/// Layout: the magic `IMLS`, a `uint16` format version, then the state in
/// TLS presentation encoding. Maps are written in key order so equal states
/// serialize identically. The state holds private keys and epoch secrets:
/// store it encrypted at rest.
extension MLSGroup {
    static let stateMagic: [UInt8] = Array("IMLS".utf8)
    /// Largest accepted PrivateMessage padding block.
    static let maxPaddingBlock = 1 << 16
    /// Current state format version.
    public static let stateFormatVersion: UInt16 = 1

    /// Serializes the group state.
    public func serializedState() -> [UInt8] {
        var w = TLSWriter()
        w.writeBytes(MLSGroup.stateMagic)
        w.writeUInt16(MLSGroup.stateFormatVersion)
        context.encode(to: &w)
        tree.wire.encode(to: &w)
        w.writeUInt32(myLeaf)
        w.writeOpaque(signaturePrivateKey)
        w.writeVector(nodeKeys.sorted { $0.key < $1.key }) { w, e in
            w.writeUInt32(e.key); w.writeOpaque(e.value.privateKey); w.writeOpaque(e.value.publicKey)
        }
        w.writeOpaque(interimTranscriptHash)
        for s in secrets.all { w.writeOpaque(s) }
        secretTree.encode(to: &w)
        w.writeVector(pendingProposals.sorted { $0.key.lexicographicallyPrecedes($1.key) }) { w, e in
            w.writeOpaque(e.key); e.value.proposal.encode(to: &w); e.value.sender.encode(to: &w)
        }
        w.writeVector(resumptionPSKs.sorted { $0.key < $1.key }) { w, e in w.writeUInt64(e.key); w.writeOpaque(e.value) }
        w.writeVector(externalPSKs.sorted { $0.key.lexicographicallyPrecedes($1.key) }) { w, e in w.writeOpaque(e.key); w.writeOpaque(e.value) }
        w.writeUInt32(UInt32(clamping: configuration.resumptionPSKWindow))
        w.writeUInt32(UInt32(clamping: configuration.paddingBlock))
        w.writeUInt32(UInt32(clamping: configuration.pastEpochWindow))
        w.writeVector(pastEpochs.sorted { $0.key < $1.key }) { w, e in
            w.writeUInt64(e.key)
            e.value.context.encode(to: &w)
            w.writeOpaque(e.value.senderDataSecret)
            e.value.secretTree.encode(to: &w)
            w.writeVector(e.value.signatureKeys.sorted { $0.key < $1.key }) { w, k in w.writeUInt32(k.key); w.writeOpaque(k.value) }
        }
        w.writeVector(pendingUpdateKeys.sorted { $0.key.lexicographicallyPrecedes($1.key) }) { w, e in w.writeOpaque(e.key); w.writeOpaque(e.value) }
        return w.bytes
    }

    /// Restores a group from ``serializedState()`` output.
    public init(serializedState bytes: [UInt8]) throws {
        var r = TLSReader(bytes)
        guard try r.readBytes(4) == MLSGroup.stateMagic else { throw MLSError(.invalidValue, "not an ImprintMLS group state") }
        let version = try r.readUInt16()
        guard version == MLSGroup.stateFormatVersion else { throw MLSError(.invalidValue, "unsupported state version \(version)") }
        let ctx = try GroupContext(from: &r)
        let cs = ctx.cipherSuite
        try cs.requireSupported()
        let tree = try RatchetTree(suite: cs, wire: try RatchetTreeNodes(from: &r))
        let myLeaf = try r.readUInt32()
        guard tree.leaf(myLeaf) != nil else { throw MLSError(.invalidState, "own leaf is blank") }
        let sig = try r.readOpaque()
        var nodeKeys: [UInt32: NodeKey] = [:]
        for (n, k) in try r.readVector({ r in (try r.readUInt32(), NodeKey(privateKey: try r.readOpaque(), publicKey: try r.readOpaque())) }) {
            nodeKeys[n] = k
        }
        let interim = try r.readOpaque()
        var s: [[UInt8]] = []
        for _ in 0 ..< 12 { s.append(try r.readOpaque()) }
        let secrets = EpochSecrets(joinerSecret: s[0], welcomeSecret: s[1], epochSecret: s[2], senderDataSecret: s[3], encryptionSecret: s[4],
                                   exporterSecret: s[5], externalSecret: s[6], confirmationKey: s[7], membershipKey: s[8],
                                   resumptionPSK: s[9], epochAuthenticator: s[10], initSecret: s[11])
        let st = try SecretTree(from: &r, suite: cs)
        var pending: [[UInt8]: PendingProposal] = [:]
        for (ref, p) in try r.readVector({ r in (try r.readOpaque(), PendingProposal(proposal: try Proposal(from: &r), sender: try Sender(from: &r))) }) {
            pending[ref] = p
        }
        var resumption: [UInt64: [UInt8]] = [:]
        for (e, psk) in try r.readVector({ r in (try r.readUInt64(), try r.readOpaque()) }) { resumption[e] = psk }
        var external: [[UInt8]: [UInt8]] = [:]
        for (id, psk) in try r.readVector({ r in (try r.readOpaque(), try r.readOpaque()) }) { external[id] = psk }
        let config = MLSGroupConfiguration(secretTreeLimits: st.limits, resumptionPSKWindow: Int(try r.readUInt32()),
                                           paddingBlock: Int(try r.readUInt32()), pastEpochWindow: Int(try r.readUInt32()))
        guard config.paddingBlock <= MLSGroup.maxPaddingBlock else { throw MLSError(.invalidValue, "padding block \(config.paddingBlock)") }
        guard st.leafCount == tree.leafCount else { throw MLSError(.invalidState, "secret tree width differs from the tree") }
        var past: [UInt64: PastEpoch] = [:]
        for (e, p) in try r.readVector({ r -> (UInt64, PastEpoch) in
            let e = try r.readUInt64()
            let c = try GroupContext(from: &r)
            let sds = try r.readOpaque()
            let t = try SecretTree(from: &r, suite: cs)
            var keys: [UInt32: [UInt8]] = [:]
            for (l, k) in try r.readVector({ r in (try r.readUInt32(), try r.readOpaque()) }) { keys[l] = k }
            return (e, PastEpoch(context: c, senderDataSecret: sds, secretTree: t, signatureKeys: keys))
        }) { past[e] = p }
        var updateKeys: [[UInt8]: [UInt8]] = [:]
        for (pk, sk) in try r.readVector({ r in (try r.readOpaque(), try r.readOpaque()) }) { updateKeys[pk] = sk }
        try r.finish()
        self.init(context: ctx, tree: tree, myLeaf: myLeaf, signer: try SignatureSigner(suite: cs, privateKey: sig), nodeKeys: nodeKeys, interimTranscriptHash: interim,
                  secrets: secrets, secretTree: st, pendingProposals: pending, resumptionPSKs: resumption, externalPSKs: external,
                  pastEpochs: past, pendingUpdateKeys: updateKeys, configuration: config)
    }
}

extension EpochSecrets {
    var all: [[UInt8]] {
        [joinerSecret, welcomeSecret, epochSecret, senderDataSecret, encryptionSecret, exporterSecret, externalSecret,
         confirmationKey, membershipKey, resumptionPSK, epochAuthenticator, initSecret]
    }
}

extension HashRatchet {
    func encode(to w: inout TLSWriter) {
        w.writeOpaque(secret)
        w.writeUInt32(generation)
        w.writeBool(exhausted)
        w.writeVector(skippedOrder.compactMap { skipped[$0] }) { w, k in
            w.writeUInt32(k.generation); w.writeOpaque(k.key); w.writeOpaque(k.nonce)
        }
    }

    init(from r: inout TLSReader) throws {
        secret = try r.readOpaque()
        generation = try r.readUInt32()
        exhausted = try r.readBool()
        let keys = try r.readVector { r in RatchetKey(generation: try r.readUInt32(), key: try r.readOpaque(), nonce: try r.readOpaque()) }
        skipped = [:]
        skippedOrder = []
        for k in keys {
            guard skipped.updateValue(k, forKey: k.generation) == nil else { throw MLSError(.invalidValue, "duplicate skipped generation") }
            skippedOrder.append(k.generation)
        }
    }
}

extension SecretTree {
    func encode(to w: inout TLSWriter) {
        w.writeUInt32(leafCount)
        w.writeUInt32(limits.maxForwardDistance)
        w.writeUInt32(UInt32(clamping: limits.maxSkippedKeys))
        w.writeVector(nodeSecrets.sorted { $0.key < $1.key }) { w, e in w.writeUInt32(e.key); w.writeOpaque(e.value) }
        for ratchets in [handshake, application] {
            w.writeVector(ratchets.sorted { $0.key < $1.key }) { w, e in w.writeUInt32(e.key); e.value.encode(to: &w) }
        }
    }

    init(from r: inout TLSReader, suite: CipherSuite) throws {
        let leafCount = try r.readUInt32()
        guard leafCount > 0, leafCount <= RatchetTree.maxLeaves, leafCount & (leafCount - 1) == 0 else { throw MLSError(.invalidValue, "secret tree width") }
        let limits = SecretTreeLimits(maxForwardDistance: try r.readUInt32(), maxSkippedKeys: Int(try r.readUInt32()))
        self.init(suite: suite, encryptionSecret: [], leafCount: leafCount, limits: limits)
        nodeSecrets = [:]
        for (n, s) in try r.readVector({ r in (try r.readUInt32(), try r.readOpaque()) }) {
            guard n < TreeMath.nodeWidth(leafCount) else { throw MLSError(.invalidValue, "secret tree node") }
            nodeSecrets[n] = s
        }
        for i in 0 ..< 2 {
            var map: [UInt32: HashRatchet] = [:]
            for (l, ratchet) in try r.readVector({ r in (try r.readUInt32(), try HashRatchet(from: &r)) }) {
                guard l < leafCount else { throw MLSError(.invalidValue, "ratchet leaf") }
                map[l] = ratchet
            }
            if i == 0 { handshake = map } else { application = map }
        }
    }
}
