/// HPKE private keys a member holds for tree nodes (its leaf and some parents).
struct TreePrivateKeys: Sendable, Hashable, Codable {
    var keys: [UInt32: [UInt8]] = [:]
}

/// Result of creating or processing an UpdatePath.
struct PathSecrets: Sendable {
    /// Path secrets by node index, for nodes whose secret the member learned.
    var pathSecrets: [UInt32: [UInt8]]
    /// The commit_secret (path secret one step past the root).
    var commitSecret: [UInt8]
    /// Private keys derived from the path secrets.
    var privateKeys: [UInt32: [UInt8]]
}

extension RatchetTree {
    /// Filtered direct path of a leaf: (parent, copath child) pairs from the
    /// bottom, omitting parents whose copath child has an empty resolution.
    func filteredDirectPath(_ leaf: UInt32, excluding: Set<UInt32> = []) -> [(node: UInt32, copath: UInt32)] {
        let leafNode = leaf * 2
        var out: [(UInt32, UInt32)] = []
        var child = leafNode
        for p in TreeMath.directPath(leafNode, leafCount: leafCount) {
            guard let s = TreeMath.sibling(child, leafCount: leafCount) else { break }
            if !resolution(s, excluding: excluding).isEmpty { out.append((p, s)) }
            child = p
        }
        return out
    }

    /// Derives node key pairs from a path secret chain.
    static func nodeKeyPair(suite: CipherSuite, pathSecret: [UInt8]) throws -> (privateKey: [UInt8], publicKey: [UInt8]) {
        try suite.deriveKeyPair(ikm: try suite.deriveSecret(secret: pathSecret, label: "node"))
    }

    /// Sets the nodes of `sender`'s filtered direct path to `publicKeys`,
    /// blanks the rest of the direct path, and recomputes parent hashes.
    /// Returns the parent hash the sender's leaf must carry.
    mutating func applyPathKeys(sender: UInt32, publicKeys: [[UInt8]], excluding: Set<UInt32> = []) throws -> [UInt8] {
        let fdp = filteredDirectPath(sender, excluding: excluding)
        guard fdp.count == publicKeys.count else {
            throw MLSError(.invalidCommit, "UpdatePath has \(publicKeys.count) nodes, filtered direct path has \(fdp.count)")
        }
        blankDirectPath(sender)
        for (i, entry) in fdp.enumerated() {
            setNode(entry.node, .parent(ParentNode(encryptionKey: publicKeys[i], parentHash: [], unmergedLeaves: [])))
        }
        // Parent hashes, top-down: each node covers the one above it.
        var ph: [UInt8] = []
        for entry in fdp.reversed() {
            guard case var .parent(pn)? = nodes[Int(entry.node)] else { throw MLSError(.invalidState, "path node") }
            pn.parentHash = ph
            setNode(entry.node, .parent(pn))
            ph = parentHash(of: entry.node, sibling: entry.copath) ?? []
        }
        return ph
    }

    /// Merges a received UpdatePath from `sender` (RFC 9420 §7.5, §12.4.2):
    /// validates the new leaf, installs the path keys and checks the leaf's parent hash.
    mutating func mergeUpdatePath(sender: UInt32, path: UpdatePath, groupID: [UInt8], excluding: Set<UInt32> = []) throws {
        guard leaf(sender) != nil else { throw MLSError(.invalidCommit, "UpdatePath sender leaf is blank") }
        guard case let .commit(leafPH) = path.leafNode.source else {
            throw MLSError(.invalidLeafNode, "UpdatePath leaf_node_source is not commit")
        }
        guard try path.leafNode.verifySignature(suite: suite, groupID: groupID, leafIndex: sender) else {
            throw MLSError(.signatureInvalid, "UpdatePath leaf signature")
        }
        var seen = Set<[UInt8]>([path.leafNode.encryptionKey])
        for n in path.nodes where !seen.insert(n.encryptionKey).inserted {
            throw MLSError(.invalidCommit, "repeated encryption key in UpdatePath")
        }
        let expected = try applyPathKeys(sender: sender, publicKeys: path.nodes.map(\.encryptionKey), excluding: excluding)
        guard expected == leafPH else { throw MLSError(.invalidParentHash, "UpdatePath leaf parent hash") }
        setNode(sender * 2, .leaf(path.leafNode))
        refreshTreeHashes()
    }

    /// Decrypts the path secret meant for `me` from an UpdatePath already
    /// merged into this tree, then derives the secrets up to the root.
    func decryptPath(sender: UInt32, path: UpdatePath, me: UInt32, privateKeys: TreePrivateKeys,
                     groupContext: [UInt8], excluding: Set<UInt32> = []) throws -> PathSecrets {
        guard me != sender else { throw MLSError(.invalidState, "cannot decrypt own UpdatePath") }
        let fdp = filteredDirectPath(sender, excluding: excluding)
        guard fdp.count == path.nodes.count else { throw MLSError(.invalidCommit, "UpdatePath length") }
        for (i, entry) in fdp.enumerated() where path.nodes[i].encryptedPathSecret.count != resolution(entry.copath, excluding: excluding).count {
            throw MLSError(.invalidCommit, "UpdatePath node \(entry.node) has the wrong number of ciphertexts")
        }
        guard let k = fdp.firstIndex(where: { TreeMath.isInSubtree(me * 2, root: $0.node) }) else {
            throw MLSError(.invalidCommit, "no common ancestor on the filtered direct path")
        }
        let res = resolution(fdp[k].copath, excluding: excluding)
        let cts = path.nodes[k].encryptedPathSecret
        guard cts.count == res.count else { throw MLSError(.invalidCommit, "wrong number of encrypted path secrets") }
        guard let pos = res.firstIndex(where: { privateKeys.keys[$0] != nil && TreeMath.isInSubtree(me * 2, root: $0) }),
              let sk = privateKeys.keys[res[pos]] else {
            throw MLSError(.notFound, "no private key for the resolution")
        }
        var secret = try suite.decryptWithLabel(privateKey: sk, label: "UpdatePathNode", context: groupContext,
                                                kemOutput: cts[pos].kemOutput, ciphertext: cts[pos].ciphertext)
        guard secret.count == suite.hashLength else { throw MLSError(.invalidCommit, "path secret length") }
        var out = PathSecrets(pathSecrets: [:], commitSecret: [], privateKeys: [:])
        for i in k ..< fdp.count {
            if i > k { secret = try suite.deriveSecret(secret: secret, label: "path") }
            let kp = try RatchetTree.nodeKeyPair(suite: suite, pathSecret: secret)
            guard kp.publicKey == path.nodes[i].encryptionKey else {
                throw MLSError(.invalidCommit, "path secret does not match public key at node \(fdp[i].node)")
            }
            out.pathSecrets[fdp[i].node] = secret
            out.privateKeys[fdp[i].node] = kp.privateKey
        }
        out.commitSecret = try suite.deriveSecret(secret: secret, label: "path")
        return out
    }

    /// Creates an UpdatePath for `sender` and merges it into this tree.
    /// `contextForTree` builds the provisional GroupContext bytes from the
    /// merged tree; `newLeaf` is the sender's leaf content (keys replaced here).
    mutating func createUpdatePath(sender: UInt32, newLeaf: LeafNode, signaturePrivateKey: [UInt8], groupID: [UInt8],
                                   excluding: Set<UInt32> = [], leafSecret: [UInt8]? = nil,
                                   contextForTree: (RatchetTree) throws -> [UInt8]) throws -> (UpdatePath, PathSecrets) {
        try createUpdatePath(sender: sender, newLeaf: newLeaf, signer: SignatureSigner(suite: suite, privateKey: signaturePrivateKey), groupID: groupID,
                             excluding: excluding, leafSecret: leafSecret, contextForTree: contextForTree)
    }

    mutating func createUpdatePath(sender: UInt32, newLeaf: LeafNode, signer: SignatureSigner, groupID: [UInt8],
                                   excluding: Set<UInt32> = [], leafSecret: [UInt8]? = nil,
                                   contextForTree: (RatchetTree) throws -> [UInt8]) throws -> (UpdatePath, PathSecrets) {
        let fdp = filteredDirectPath(sender, excluding: excluding)
        var secret = leafSecret ?? CipherSuite.randomBytes(suite.hashLength)
        let leafKP = try RatchetTree.nodeKeyPair(suite: suite, pathSecret: secret)
        var secrets = PathSecrets(pathSecrets: [:], commitSecret: [], privateKeys: [sender * 2: leafKP.privateKey])
        var publicKeys: [[UInt8]] = []
        for entry in fdp {
            secret = try suite.deriveSecret(secret: secret, label: "path")
            let kp = try RatchetTree.nodeKeyPair(suite: suite, pathSecret: secret)
            secrets.pathSecrets[entry.node] = secret
            secrets.privateKeys[entry.node] = kp.privateKey
            publicKeys.append(kp.publicKey)
        }
        secrets.commitSecret = try suite.deriveSecret(secret: secret, label: "path")
        // Resolutions are taken before merging (copath subtrees are unchanged by it).
        let resolutions = fdp.map { resolution($0.copath, excluding: excluding) }
        let encryptionKeys = resolutions.map { $0.map { nodes[Int($0)]?.encryptionKey ?? [] } }
        let leafPH = try applyPathKeys(sender: sender, publicKeys: publicKeys, excluding: excluding)
        var leaf = newLeaf
        leaf.encryptionKey = leafKP.publicKey
        leaf.source = .commit(parentHash: leafPH)
        try leaf.sign(suite: suite, signer: signer, groupID: groupID, leafIndex: sender)
        setNode(sender * 2, .leaf(leaf))
        refreshTreeHashes()
        let context = try contextForTree(self)
        var pathNodes: [UpdatePathNode] = []
        for (i, entry) in fdp.enumerated() {
            guard let s = secrets.pathSecrets[entry.node] else { throw MLSError(.invalidState, "path secret") }
            let cts = try encryptionKeys[i].map { pk in
                let c = try suite.encryptWithLabel(publicKey: pk, label: "UpdatePathNode", context: context, plaintext: s)
                return HPKECiphertext(kemOutput: c.kemOutput, ciphertext: c.ciphertext)
            }
            pathNodes.append(UpdatePathNode(encryptionKey: publicKeys[i], encryptedPathSecret: cts))
        }
        return (UpdatePath(leafNode: leaf, nodes: pathNodes), secrets)
    }
}
