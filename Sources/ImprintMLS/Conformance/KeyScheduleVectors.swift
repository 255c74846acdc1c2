extension MLSTestVectors {
    static func runKeySchedule(_ r: VectorRecord) throws -> Outcome {
        let cs = try r.suite
        let groupID = try r.bytes("group_id")
        var initSecret = try r.bytes("initial_init_secret")
        for (n, e) in try r.records("epochs").enumerated() {
            let ctx = GroupContext(cipherSuite: cs, groupID: groupID, epoch: UInt64(n), treeHash: try e.bytes("tree_hash"),
                                   confirmedTranscriptHash: try e.bytes("confirmed_transcript_hash"), extensions: [])
            try expectEqual(ctx.tlsBytes, try e.bytes("group_context"), "epoch \(n) group_context")
            let joiner = try KeySchedule.joinerSecret(suite: cs, initSecret: initSecret, commitSecret: try e.bytes("commit_secret"), groupContext: ctx.tlsBytes)
            try expectEqual(joiner, try e.bytes("joiner_secret"), "epoch \(n) joiner_secret")
            let s = try KeySchedule.epochSecrets(suite: cs, joinerSecret: joiner, pskSecret: try e.bytes("psk_secret"), groupContext: ctx.tlsBytes)
            try expectEqual(s.welcomeSecret, try e.bytes("welcome_secret"), "epoch \(n) welcome_secret")
            try expectEqual(s.initSecret, try e.bytes("init_secret"), "epoch \(n) init_secret")
            try expectEqual(s.senderDataSecret, try e.bytes("sender_data_secret"), "epoch \(n) sender_data_secret")
            try expectEqual(s.encryptionSecret, try e.bytes("encryption_secret"), "epoch \(n) encryption_secret")
            try expectEqual(s.exporterSecret, try e.bytes("exporter_secret"), "epoch \(n) exporter_secret")
            try expectEqual(s.epochAuthenticator, try e.bytes("epoch_authenticator"), "epoch \(n) epoch_authenticator")
            try expectEqual(s.externalSecret, try e.bytes("external_secret"), "epoch \(n) external_secret")
            try expectEqual(s.confirmationKey, try e.bytes("confirmation_key"), "epoch \(n) confirmation_key")
            try expectEqual(s.membershipKey, try e.bytes("membership_key"), "epoch \(n) membership_key")
            try expectEqual(s.resumptionPSK, try e.bytes("resumption_psk"), "epoch \(n) resumption_psk")
            try expectEqual(try cs.deriveKeyPair(ikm: s.externalSecret).publicKey, try e.bytes("external_pub"), "epoch \(n) external_pub")
            let ex = try e.record("exporter")
            // Quirk: the generators pass the exporter label's hex text itself
            // (its ASCII bytes) as the label, not the decoded bytes.
            let label = Array(try ex.string("label").utf8)
            try expectEqual(try KeySchedule.export(suite: cs, exporterSecret: s.exporterSecret, label: label,
                                                   context: try ex.bytes("context"), length: try ex.int("length")),
                            try ex.bytes("secret"), "epoch \(n) exporter")
            initSecret = s.initSecret
        }
        return .passed
    }

    static func runPSKSecret(_ r: VectorRecord) throws -> Outcome {
        let cs = try r.suite
        let psks = try r.records("psks").map { p in
            (id: PreSharedKeyID(kind: .external(pskID: try p.bytes("psk_id")), nonce: try p.bytes("psk_nonce")), psk: try p.bytes("psk"))
        }
        try expectEqual(try KeySchedule.pskSecret(suite: cs, psks: psks), try r.bytes("psk_secret"), "psk_secret")
        return .passed
    }

    static func runTranscriptHashes(_ r: VectorRecord) throws -> Outcome {
        let cs = try r.suite
        let ac = try AuthenticatedContent(tlsBytes: try r.bytes("authenticated_content"))
        guard case .commit = ac.content.content, let tag = ac.auth.confirmationTag else { throw VectorFailure("not a commit") }
        let confirmed = KeySchedule.confirmedTranscriptHash(suite: cs, interimBefore: try r.bytes("interim_transcript_hash_before"), content: ac)
        try expectEqual(confirmed, try r.bytes("confirmed_transcript_hash_after"), "confirmed_transcript_hash_after")
        try expectEqual(cs.mac(key: try r.bytes("confirmation_key"), data: confirmed), tag, "confirmation_tag")
        try expectEqual(KeySchedule.interimTranscriptHash(suite: cs, confirmed: confirmed, confirmationTag: tag),
                        try r.bytes("interim_transcript_hash_after"), "interim_transcript_hash_after")
        return .passed
    }
}
