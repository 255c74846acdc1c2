/// The secrets of one epoch (RFC 9420 §8).
struct EpochSecrets: Sendable, Hashable {
    var joinerSecret: [UInt8]
    var welcomeSecret: [UInt8]
    var epochSecret: [UInt8]
    var senderDataSecret: [UInt8]
    var encryptionSecret: [UInt8]
    var exporterSecret: [UInt8]
    var externalSecret: [UInt8]
    var confirmationKey: [UInt8]
    var membershipKey: [UInt8]
    var resumptionPSK: [UInt8]
    var epochAuthenticator: [UInt8]
    var initSecret: [UInt8]
}

extension EpochSecrets {
    /// The secrets kept for the life of an epoch. The epoch secret, the
    /// joiner and welcome secrets and the encryption secret (the root of the
    /// secret tree, which holds it from then on) are wiped once the epoch is
    /// set up, so that deleting consumed message keys means something.
    var retained: EpochSecrets {
        var s = self
        s.joinerSecret = []
        s.welcomeSecret = []
        s.epochSecret = []
        s.encryptionSecret = []
        return s
    }
}

/// Key schedule functions (RFC 9420 §8).
enum KeySchedule {
    /// joiner_secret from the previous init_secret, the commit_secret and the new GroupContext.
    static func joinerSecret(suite: CipherSuite, initSecret: [UInt8], commitSecret: [UInt8], groupContext: [UInt8]) throws -> [UInt8] {
        let prk = suite.extract(salt: initSecret, ikm: commitSecret)
        return try suite.expandWithLabel(secret: prk, label: "joiner", context: groupContext, length: suite.hashLength)
    }

    /// The welcome_secret from joiner_secret and psk_secret.
    static func welcomeSecret(suite: CipherSuite, joinerSecret: [UInt8], pskSecret: [UInt8]) throws -> [UInt8] {
        try suite.deriveSecret(secret: suite.extract(salt: joinerSecret, ikm: pskSecret), label: "welcome")
    }

    /// Derives every epoch secret from joiner_secret, psk_secret and the GroupContext.
    static func epochSecrets(suite: CipherSuite, joinerSecret: [UInt8], pskSecret: [UInt8], groupContext: [UInt8]) throws -> EpochSecrets {
        let prk = suite.extract(salt: joinerSecret, ikm: pskSecret)
        let epoch = try suite.expandWithLabel(secret: prk, label: "epoch", context: groupContext, length: suite.hashLength)
        func d(_ l: String) throws -> [UInt8] { try suite.deriveSecret(secret: epoch, label: l) }
        return EpochSecrets(
            joinerSecret: joinerSecret,
            welcomeSecret: try suite.deriveSecret(secret: prk, label: "welcome"),
            epochSecret: epoch,
            senderDataSecret: try d("sender data"),
            encryptionSecret: try d("encryption"),
            exporterSecret: try d("exporter"),
            externalSecret: try d("external"),
            confirmationKey: try d("confirm"),
            membershipKey: try d("membership"),
            resumptionPSK: try d("resumption"),
            epochAuthenticator: try d("authentication"),
            initSecret: try d("init"))
    }

    /// MLS-Exporter(label, context, length).
    static func export(suite: CipherSuite, exporterSecret: [UInt8], label: [UInt8], context: [UInt8], length: Int) throws -> [UInt8] {
        let s = try suite.expandWithLabel(secret: exporterSecret, label: label, context: [], length: suite.hashLength)
        return try suite.expandWithLabel(secret: s, label: "exported", context: suite.hash(context), length: length)
    }

    /// psk_secret for an ordered list of (id, psk) pairs (RFC 9420 §8.4).
    static func pskSecret(suite: CipherSuite, psks: [(id: PreSharedKeyID, psk: [UInt8])]) throws -> [UInt8] {
        let zero = [UInt8](repeating: 0, count: suite.hashLength)
        var secret = zero
        guard psks.count <= Int(UInt16.max) else { throw MLSError(.lengthOverflow, "too many PSKs") }
        for (i, entry) in psks.enumerated() {
            let extracted = suite.extract(salt: zero, ikm: entry.psk)
            var label = TLSWriter()
            entry.id.encode(to: &label)
            label.writeUInt16(UInt16(i))
            label.writeUInt16(UInt16(psks.count))
            let input = try suite.expandWithLabel(secret: extracted, label: "derived psk", context: label.bytes, length: suite.hashLength)
            secret = suite.extract(salt: input, ikm: secret)
        }
        return secret
    }

    /// confirmed_transcript_hash = Hash(interim_before || ConfirmedTranscriptHashInput).
    static func confirmedTranscriptHash(suite: CipherSuite, interimBefore: [UInt8], content: AuthenticatedContent) -> [UInt8] {
        suite.hash(interimBefore + content.confirmedTranscriptHashInput)
    }

    /// interim_transcript_hash = Hash(confirmed || InterimTranscriptHashInput{confirmation_tag}).
    static func interimTranscriptHash(suite: CipherSuite, confirmed: [UInt8], confirmationTag: [UInt8]) -> [UInt8] {
        var w = TLSWriter()
        w.writeOpaque(confirmationTag)
        return suite.hash(confirmed + w.bytes)
    }
}
