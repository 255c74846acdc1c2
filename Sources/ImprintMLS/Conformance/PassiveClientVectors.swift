extension MLSTestVectors {
    /// Joins as the vector's KeyPackage; returns the group.
    static func passiveJoin(_ r: VectorRecord) throws -> (MLSGroup, [[UInt8]: [UInt8]]) {
        let cs = try r.suite
        guard case let .keyPackage(kp) = try MLSMessage(tlsBytes: try r.bytes("key_package")) else { throw VectorFailure("key_package is not an MLSMessage KeyPackage") }
        guard case let .welcome(welcome) = try MLSMessage(tlsBytes: try r.bytes("welcome")) else { throw VectorFailure("welcome is not an MLSMessage Welcome") }
        let keys = KeyPackagePrivateKeys(initKey: try r.bytes("init_priv"), encryptionKey: try r.bytes("encryption_priv"), signatureKey: try r.bytes("signature_priv"))
        try expectEqual(try cs.hpkePublicKey(privateKey: keys.initKey), kp.initKey, "init_priv")
        try expectEqual(try cs.hpkePublicKey(privateKey: keys.encryptionKey), kp.leafNode.encryptionKey, "encryption_priv")
        try expectEqual(try cs.signaturePublicKey(privateKey: keys.signatureKey), kp.leafNode.signatureKey, "signature_priv")
        // The KeyPackage is checked at a time inside its own lifetime (the files' are expired).
        if case let .keyPackage(lifetime) = kp.leafNode.source {
            try kp.validate(suite: cs, now: lifetime.notBefore)
        }
        var psks: [[UInt8]: [UInt8]] = [:]
        for p in try r.records("external_psks") { psks[try p.bytes("psk_id")] = try p.bytes("psk") }
        let tree = try r.optionalBytes("ratchet_tree").map { try RatchetTreeNodes(tlsBytes: $0) }
        // Keep resumption PSKs of every epoch: a history may refer to any earlier epoch.
        let config = MLSGroupConfiguration(resumptionPSKWindow: 1 << 20)
        let group = try MLSGroup.join(welcome: welcome, keyPackage: kp, privateKeys: keys, ratchetTree: tree, externalPSKs: psks, configuration: config)
        try expectEqual(group.epochAuthenticator, try r.bytes("initial_epoch_authenticator"), "initial_epoch_authenticator")
        return (group, psks)
    }

    static func runPassiveClientWelcome(_ r: VectorRecord) throws -> Outcome {
        _ = try passiveJoin(r)
        return .passed
    }

    static func runPassiveClientHandlingCommit(_ r: VectorRecord) throws -> Outcome {
        var (group, _) = try passiveJoin(r)
        // Proposals and commits in these files carry lifetimes 0...2^64-1; any fixed time works.
        let clock = MLSClock.fixed(1_700_000_000)
        for (i, e) in try r.records("epochs").enumerated() {
            for p in try e.array("proposals") {
                guard let hex = p as? String else { throw VectorFailure("proposal") }
                let result = try group.process(try MLSMessage(tlsBytes: try hexDecode(hex)), clock: clock)
                guard case .proposal = result else { throw VectorFailure("epoch \(i): proposal message was \(result)") }
            }
            let result = try group.process(try MLSMessage(tlsBytes: try e.bytes("commit")), clock: clock)
            guard case .commit = result else { throw VectorFailure("epoch \(i): commit message was \(result)") }
            try expectEqual(group.epochAuthenticator, try e.bytes("epoch_authenticator"), "epoch \(i) epoch_authenticator")
        }
        return .passed
    }
}
