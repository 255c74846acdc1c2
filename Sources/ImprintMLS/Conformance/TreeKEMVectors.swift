extension MLSTestVectors {
    static func runTreeKEM(_ r: VectorRecord) throws -> Outcome {
        let cs = try r.suite
        let groupID = try r.bytes("group_id"), epoch = try r.uint64("epoch"), cth = try r.bytes("confirmed_transcript_hash")
        let tree = try RatchetTree(suite: cs, bytes: try r.bytes("ratchet_tree"))
        try tree.validate(groupID: groupID)
        func context(_ t: RatchetTree) -> [UInt8] {
            GroupContext(cipherSuite: cs, groupID: groupID, epoch: epoch, treeHash: t.treeHash, confirmedTranscriptHash: cth, extensions: []).tlsBytes
        }

        struct Member { var index: UInt32; var keys: TreePrivateKeys; var signaturePriv: [UInt8] }
        var members: [Member] = []
        for lp in try r.records("leaves_private") {
            guard let idx = UInt32(exactly: try lp.int("index")), let leaf = tree.leaf(idx) else { throw VectorFailure("leaves_private index") }
            var keys = TreePrivateKeys()
            let encPriv = try lp.bytes("encryption_priv")
            try expectEqual(try cs.hpkePublicKey(privateKey: encPriv), leaf.encryptionKey, "leaf \(idx) encryption key")
            keys.keys[idx * 2] = encPriv
            for ps in try lp.records("path_secrets") {
                guard let node = UInt32(exactly: try ps.int("node")), let pn = tree.parentNode(node) else { throw VectorFailure("path secret node") }
                let kp = try RatchetTree.nodeKeyPair(suite: cs, pathSecret: try ps.bytes("path_secret"))
                try expectEqual(kp.publicKey, pn.encryptionKey, "leaf \(idx) key for node \(node)")
                keys.keys[node] = kp.privateKey
            }
            members.append(Member(index: idx, keys: keys, signaturePriv: try lp.bytes("signature_priv")))
        }

        for (u, up) in try r.records("update_paths").enumerated() {
            guard let sender = UInt32(exactly: try up.int("sender")) else { throw VectorFailure("sender") }
            let path = try UpdatePath(tlsBytes: try up.bytes("update_path"))
            var merged = tree
            try merged.mergeUpdatePath(sender: sender, path: path, groupID: groupID)
            try expectEqual(merged.treeHash, try up.bytes("tree_hash_after"), "update \(u) tree_hash_after")
            try expectTrue(merged.verifyParentHashes(), "update \(u) parent hashes after merge")
            let expectedSecrets = try up.array("path_secrets")
            let mergedContext = context(merged)
            // path_secrets is indexed by leaf index (null for the sender and non-private leaves).
            for m in members where m.index != sender {
                let j = Int(m.index)
                guard j < expectedSecrets.count else { throw VectorFailure("update \(u) path_secrets too short") }
                let got = try merged.decryptPath(sender: sender, path: path, me: m.index, privateKeys: m.keys, groupContext: mergedContext)
                guard let hex = expectedSecrets[j] as? String else { throw VectorFailure("update \(u) path secret \(j) missing") }
                let ancestor = TreeMath.commonAncestor(m.index * 2, sender * 2)
                try expectEqual(got.pathSecrets[ancestor] ?? [], try hexDecode(hex), "update \(u) path secret for leaf \(m.index)")
                try expectEqual(got.commitSecret, try up.bytes("commit_secret"), "update \(u) commit_secret for leaf \(m.index)")
            }
        }

        // Our own UpdatePaths: the first and last private leaves commit; every
        // other private leaf must process it (all senders would only repeat the check).
        for sender in Set([members.first, members.last].compactMap { $0?.index }).sorted().compactMap({ i in members.first { $0.index == i } }) {
            var senderTree = tree
            guard let oldLeaf = tree.leaf(sender.index) else { throw VectorFailure("sender leaf") }
            let (path, secrets) = try senderTree.createUpdatePath(sender: sender.index, newLeaf: oldLeaf, signaturePrivateKey: sender.signaturePriv,
                                                                  groupID: groupID, contextForTree: context)
            try expectTrue(senderTree.verifyParentHashes(), "own UpdatePath parent hashes")
            let wirePath = try UpdatePath(tlsBytes: path.tlsBytes)
            for m in members where m.index != sender.index {
                var t = tree
                try t.mergeUpdatePath(sender: sender.index, path: wirePath, groupID: groupID)
                try expectEqual(t.treeHash, senderTree.treeHash, "own UpdatePath tree hash")
                let got = try t.decryptPath(sender: sender.index, path: wirePath, me: m.index, privateKeys: m.keys, groupContext: context(t))
                try expectEqual(got.commitSecret, secrets.commitSecret, "own UpdatePath commit secret")
            }
        }
        return .passed
    }
}
