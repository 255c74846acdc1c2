extension MLSTestVectors {
    static func runWelcome(_ r: VectorRecord) throws -> Outcome {
        let cs = try r.suite
        guard case let .keyPackage(kp) = try MLSMessage(tlsBytes: try r.bytes("key_package")) else { throw VectorFailure("key_package is not a KeyPackage MLSMessage") }
        guard case let .welcome(welcome) = try MLSMessage(tlsBytes: try r.bytes("welcome")) else { throw VectorFailure("welcome is not a Welcome MLSMessage") }
        try expectEqual(welcome.cipherSuite, cs, "welcome cipher suite")
        try expectEqual(try cs.hpkePublicKey(privateKey: try r.bytes("init_priv")), kp.initKey, "init key pair")
        let secrets = try welcome.decryptGroupSecrets(keyPackageRef: try kp.reference(), initPrivateKey: try r.bytes("init_priv"))
        try expectTrue(secrets.psks.isEmpty, "unexpected PSKs")
        let pskSecret = try KeySchedule.pskSecret(suite: cs, psks: [])
        let welcomeSecret = try KeySchedule.welcomeSecret(suite: cs, joinerSecret: secrets.joinerSecret, pskSecret: pskSecret)
        let info = try welcome.decryptGroupInfo(welcomeSecret: welcomeSecret)
        try expectTrue(try info.verifySignature(publicKey: try r.bytes("signer_pub")), "GroupInfo signature")
        let epoch = try KeySchedule.epochSecrets(suite: cs, joinerSecret: secrets.joinerSecret, pskSecret: pskSecret, groupContext: info.groupContext.tlsBytes)
        try expectEqual(cs.mac(key: epoch.confirmationKey, data: info.groupContext.confirmedTranscriptHash), info.confirmationTag, "confirmation tag")
        return .passed
    }
}
