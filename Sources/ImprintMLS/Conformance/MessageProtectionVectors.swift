extension MLSTestVectors {
    static func runMessageProtection(_ r: VectorRecord) throws -> Outcome {
        let cs = try r.suite
        let ctx = GroupContext(cipherSuite: cs, groupID: try r.bytes("group_id"), epoch: try r.uint64("epoch"), treeHash: try r.bytes("tree_hash"),
                               confirmedTranscriptHash: try r.bytes("confirmed_transcript_hash"), extensions: [])
        let sigPriv = try r.bytes("signature_priv"), sigPub = try r.bytes("signature_pub")
        let membershipKey = try r.bytes("membership_key"), senderDataSecret = try r.bytes("sender_data_secret")
        let encryptionSecret = try r.bytes("encryption_secret")
        try expectEqual(try cs.signaturePublicKey(privateKey: sigPriv), sigPub, "signature key pair")
        // Separate trees for our own round trips; each vector message was
        // protected from a fresh secret tree, so each gets its own receive tree.
        var sendTree = SecretTree(suite: cs, encryptionSecret: encryptionSecret, leafCount: 2)
        var echoTree = SecretTree(suite: cs, encryptionSecret: encryptionSecret, leafCount: 2)

        func unprotect(_ bytes: [UInt8], tree: inout SecretTree) throws -> AuthenticatedContent {
            let ac: AuthenticatedContent
            switch try MLSMessage(tlsBytes: bytes) {
            case let .publicMessage(m):
                ac = try MessageProtection.unprotectPublic(suite: cs, m, context: ctx, membershipKey: membershipKey)
            case let .privateMessage(m):
                ac = try MessageProtection.unprotectPrivate(suite: cs, m, groupID: ctx.groupID, epoch: ctx.epoch,
                                                            senderDataSecret: senderDataSecret, secretTree: &tree)
            default:
                throw VectorFailure("not a framed message")
            }
            try expectEqual(ac.content.sender, .member(leafIndex: 1), "sender")
            try MessageProtection.verifySignature(suite: cs, ac, context: ctx, signaturePublicKey: sigPub)
            return ac
        }

        for kind in ["proposal", "commit", "application"] {
            let raw = try r.bytes(kind)
            let content: Content
            switch kind {
            case "proposal": content = .proposal(try Proposal(tlsBytes: raw))
            case "commit": content = .commit(try Commit(tlsBytes: raw))
            default: content = .application(raw)
            }
            // A commit needs a confirmation tag; any MAC-sized value works for framing.
            let tag: [UInt8]? = kind == "commit" ? [UInt8](repeating: 0x5a, count: cs.hashLength) : nil
            let framed = FramedContent(groupID: ctx.groupID, epoch: ctx.epoch, sender: .member(leafIndex: 1), authenticatedData: [], content: content)

            var receiveTree = SecretTree(suite: cs, encryptionSecret: encryptionSecret, leafCount: 2)
            if kind != "application" {
                let got = try unprotect(try r.bytes("\(kind)_pub"), tree: &receiveTree)
                try expectEqual(got.content.content, content, "\(kind)_pub content")
                let mine = try MessageProtection.protectPublic(suite: cs, content: framed, confirmationTag: tag, context: ctx,
                                                               signaturePrivateKey: sigPriv, membershipKey: membershipKey)
                let back = try unprotect(MLSMessage.publicMessage(mine).tlsBytes, tree: &echoTree)
                try expectEqual(back.content.content, content, "own \(kind) PublicMessage")
            } else {
                do {
                    _ = try MessageProtection.protectPublic(suite: cs, content: framed, confirmationTag: nil, context: ctx,
                                                           signaturePrivateKey: sigPriv, membershipKey: membershipKey)
                    throw VectorFailure("application PublicMessage was accepted")
                } catch let e as MLSError where e.code == .invalidMessage {}
            }
            let got = try unprotect(try r.bytes("\(kind)_priv"), tree: &receiveTree)
            try expectEqual(got.content.content, content, "\(kind)_priv content")
            let mine = try MessageProtection.protectPrivate(suite: cs, content: framed, confirmationTag: tag, context: ctx, signaturePrivateKey: sigPriv,
                                                            senderDataSecret: senderDataSecret, secretTree: &sendTree, paddingBlock: 32)
            let back = try unprotect(MLSMessage.privateMessage(mine).tlsBytes, tree: &echoTree)
            try expectEqual(back.content.content, content, "own \(kind) PrivateMessage")
        }
        return .passed
    }
}
