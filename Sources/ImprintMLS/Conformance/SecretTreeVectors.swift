extension MLSTestVectors {
    static func runSecretTree(_ r: VectorRecord) throws -> Outcome {
        let cs = try r.suite
        let sd = try r.record("sender_data")
        let (key, nonce) = try senderDataKeyNonce(suite: cs, senderDataSecret: try sd.bytes("sender_data_secret"), ciphertext: try sd.bytes("ciphertext"))
        try expectEqual(key, try sd.bytes("key"), "sender data key")
        try expectEqual(nonce, try sd.bytes("nonce"), "sender data nonce")
        let leaves = try r.array("leaves")
        guard let n = UInt32(exactly: leaves.count), n > 0 else { throw VectorFailure("leaves") }
        // Generous forward distance: the vectors jump straight to far generations.
        var tree = SecretTree(suite: cs, encryptionSecret: try r.bytes("encryption_secret"), leafCount: n,
                              limits: SecretTreeLimits(maxForwardDistance: 1 << 20, maxSkippedKeys: 0))
        for (i, raw) in leaves.enumerated() {
            guard let gens = raw as? [[String: Any]] else { throw VectorFailure("leaf \(i)") }
            for g in gens.map(VectorRecord.init).sorted(by: { (try? $0.int("generation")) ?? 0 < (try? $1.int("generation")) ?? 0 }) {
                guard let gen = UInt32(exactly: try g.int("generation")) else { throw VectorFailure("generation") }
                let h = try tree.takeKey(leaf: UInt32(i), type: .handshake, generation: gen)
                let a = try tree.takeKey(leaf: UInt32(i), type: .application, generation: gen)
                try expectEqual(h.key, try g.bytes("handshake_key"), "leaf \(i) gen \(gen) handshake_key")
                try expectEqual(h.nonce, try g.bytes("handshake_nonce"), "leaf \(i) gen \(gen) handshake_nonce")
                try expectEqual(a.key, try g.bytes("application_key"), "leaf \(i) gen \(gen) application_key")
                try expectEqual(a.nonce, try g.bytes("application_nonce"), "leaf \(i) gen \(gen) application_nonce")
            }
        }
        return .passed
    }
}
