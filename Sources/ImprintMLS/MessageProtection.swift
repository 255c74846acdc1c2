/// Signing, MAC-ing and encryption of framed content (RFC 9420 §6).
enum MessageProtection {
    /// FramedContentTBS.
    static func framedContentTBS(wireFormat: WireFormat, content: FramedContent, context: GroupContext?) -> [UInt8] {
        var w = TLSWriter()
        w.writeUInt16(1)
        w.writeUInt16(wireFormat.rawValue)
        content.encode(to: &w)
        switch content.sender {
        case .member, .newMemberCommit:
            context?.encode(to: &w)
        case .external, .newMemberProposal:
            break
        }
        return w.bytes
    }

    static func sign(suite: CipherSuite, wireFormat: WireFormat, content: FramedContent, context: GroupContext, signaturePrivateKey: [UInt8]) throws -> [UInt8] {
        try sign(suite: suite, wireFormat: wireFormat, content: content, context: context, signer: SignatureSigner(suite: suite, privateKey: signaturePrivateKey))
    }

    static func sign(suite: CipherSuite, wireFormat: WireFormat, content: FramedContent, context: GroupContext, signer: SignatureSigner) throws -> [UInt8] {
        try suite.signWithLabel(signer: signer, label: "FramedContentTBS",
                                content: framedContentTBS(wireFormat: wireFormat, content: content, context: context))
    }

    static func verifySignature(suite: CipherSuite, _ ac: AuthenticatedContent, context: GroupContext, signaturePublicKey: [UInt8]) throws {
        try SignatureCheck(ac, context: context, publicKey: signaturePublicKey).verify(suite: suite)
    }

    static func membershipTag(suite: CipherSuite, membershipKey: [UInt8], content: FramedContent, auth: FramedContentAuthData, context: GroupContext) -> [UInt8] {
        var w = TLSWriter()
        w.writeBytes(framedContentTBS(wireFormat: .publicMessage, content: content, context: context))
        auth.encode(to: &w)
        return suite.mac(key: membershipKey, data: w.bytes)
    }

    /// Builds a signed PublicMessage (membership tag for member senders).
    static func protectPublic(suite: CipherSuite, content: FramedContent, confirmationTag: [UInt8]?, context: GroupContext,
                              signaturePrivateKey: [UInt8], membershipKey: [UInt8]) throws -> PublicMessage {
        if case .application = content.content { throw MLSError(.invalidMessage, "application data must not be sent as PublicMessage") }
        let sig = try sign(suite: suite, wireFormat: .publicMessage, content: content, context: context, signaturePrivateKey: signaturePrivateKey)
        let auth = FramedContentAuthData(signature: sig, confirmationTag: confirmationTag)
        var tag: [UInt8]?
        if case .member = content.sender {
            tag = membershipTag(suite: suite, membershipKey: membershipKey, content: content, auth: auth, context: context)
        }
        return PublicMessage(content: content, auth: auth, membershipTag: tag)
    }

    /// Checks a PublicMessage's framing and membership tag (not its signature,
    /// which needs the sender's key: see ``verifySignature``).
    static func unprotectPublic(suite: CipherSuite, _ m: PublicMessage, context: GroupContext, membershipKey: [UInt8]) throws -> AuthenticatedContent {
        guard m.content.groupID == context.groupID else { throw MLSError(.wrongGroup, "group id") }
        guard m.content.epoch == context.epoch else { throw MLSError(.wrongEpoch, "epoch \(m.content.epoch)") }
        if case .application = m.content.content { throw MLSError(.invalidMessage, "application data in PublicMessage") }
        if case .member = m.content.sender {
            let expected = membershipTag(suite: suite, membershipKey: membershipKey, content: m.content, auth: m.auth, context: context)
            guard let tag = m.membershipTag, constantTimeEqual(tag, expected) else {
                throw MLSError(.membershipTagInvalid, "membership tag")
            }
        }
        return AuthenticatedContent(wireFormat: .publicMessage, content: m.content, auth: m.auth)
    }

    static func contentAAD(groupID: [UInt8], epoch: UInt64, contentType: ContentType, authenticatedData: [UInt8]) -> [UInt8] {
        var w = TLSWriter()
        w.writeOpaque(groupID)
        w.writeUInt64(epoch)
        w.writeUInt8(contentType.rawValue)
        w.writeOpaque(authenticatedData)
        return w.bytes
    }

    static func senderDataAAD(groupID: [UInt8], epoch: UInt64, contentType: ContentType) -> [UInt8] {
        var w = TLSWriter()
        w.writeOpaque(groupID)
        w.writeUInt64(epoch)
        w.writeUInt8(contentType.rawValue)
        return w.bytes
    }

    static func applyReuseGuard(_ nonce: [UInt8], _ guardBytes: [UInt8]) -> [UInt8] {
        var n = nonce
        for i in 0 ..< 4 { n[i] ^= guardBytes[i] }
        return n
    }

    /// Encrypts content as a PrivateMessage using the sender's next ratchet key.
    static func protectPrivate(suite: CipherSuite, content: FramedContent, confirmationTag: [UInt8]?, context: GroupContext,
                               signaturePrivateKey: [UInt8], senderDataSecret: [UInt8], secretTree: inout SecretTree,
                               paddingBlock: Int = 0) throws -> PrivateMessage {
        try protectPrivate(suite: suite, content: content, confirmationTag: confirmationTag, context: context,
                           signer: SignatureSigner(suite: suite, privateKey: signaturePrivateKey), senderDataSecret: senderDataSecret,
                           secretTree: &secretTree, paddingBlock: paddingBlock)
    }

    static func protectPrivate(suite: CipherSuite, content: FramedContent, confirmationTag: [UInt8]?, context: GroupContext,
                               signer: SignatureSigner, senderDataSecret: [UInt8], secretTree: inout SecretTree,
                               paddingBlock: Int = 0) throws -> PrivateMessage {
        let sig = try sign(suite: suite, wireFormat: .privateMessage, content: content, context: context, signer: signer)
        let ac = AuthenticatedContent(wireFormat: .privateMessage, content: content, auth: FramedContentAuthData(signature: sig, confirmationTag: confirmationTag))
        return try encryptPrivate(suite: suite, ac, senderDataSecret: senderDataSecret, secretTree: &secretTree, paddingBlock: paddingBlock)
    }

    /// Encrypts content as a PrivateMessage with `key`, a key of the sender's application
    /// ratchet taken out ahead of use (``ApplicationKeyReservation``).
    static func protectPrivate(suite: CipherSuite, content: FramedContent, confirmationTag: [UInt8]?, context: GroupContext,
                               signer: SignatureSigner, senderDataSecret: [UInt8], key: RatchetKey,
                               paddingBlock: Int = 0) throws -> PrivateMessage {
        let sig = try sign(suite: suite, wireFormat: .privateMessage, content: content, context: context, signer: signer)
        let ac = AuthenticatedContent(wireFormat: .privateMessage, content: content, auth: FramedContentAuthData(signature: sig, confirmationTag: confirmationTag))
        return try encryptPrivate(suite: suite, ac, senderDataSecret: senderDataSecret, paddingBlock: paddingBlock) { _, _ in key }
    }

    /// Encrypts signed content as a PrivateMessage.
    static func encryptPrivate(suite: CipherSuite, _ ac: AuthenticatedContent, senderDataSecret: [UInt8], secretTree: inout SecretTree,
                               paddingBlock: Int = 0) throws -> PrivateMessage {
        try encryptPrivate(suite: suite, ac, senderDataSecret: senderDataSecret, paddingBlock: paddingBlock) { leaf, type in
            try secretTree.nextKey(leaf: leaf, type: type)
        }
    }

    /// Encrypts signed content as a PrivateMessage with the key `nextKey` gives for the
    /// sender's leaf and the content's ratchet.
    private static func encryptPrivate(suite: CipherSuite, _ ac: AuthenticatedContent, senderDataSecret: [UInt8], paddingBlock: Int,
                                       nextKey: (UInt32, RatchetType) throws -> RatchetKey) throws -> PrivateMessage {
        let content = ac.content
        guard case let .member(leaf) = content.sender else { throw MLSError(.invalidMessage, "PrivateMessage sender must be a member") }
        let type = content.content.contentType
        var body = TLSWriter()
        content.content.encodeBody(to: &body)
        ac.auth.encode(to: &body)
        if paddingBlock > 1, paddingBlock <= MLSGroup.maxPaddingBlock {
            let pad = (paddingBlock - body.bytes.count % paddingBlock) % paddingBlock
            body.writeBytes([UInt8](repeating: 0, count: pad))
        }
        let key = try nextKey(leaf, type == .application ? .application : .handshake)
        let reuseGuard = CipherSuite.randomBytes(4)
        let aad = contentAAD(groupID: content.groupID, epoch: content.epoch, contentType: type, authenticatedData: content.authenticatedData)
        let ciphertext = try suite.aeadSeal(key: key.key, nonce: applyReuseGuard(key.nonce, reuseGuard), aad: aad, plaintext: body.bytes)
        var sd = TLSWriter()
        sd.writeUInt32(leaf)
        sd.writeUInt32(key.generation)
        sd.writeBytes(reuseGuard)
        let (sdKey, sdNonce) = try senderDataKeyNonce(suite: suite, senderDataSecret: senderDataSecret, ciphertext: ciphertext)
        let encSD = try suite.aeadSeal(key: sdKey, nonce: sdNonce, aad: senderDataAAD(groupID: content.groupID, epoch: content.epoch, contentType: type), plaintext: sd.bytes)
        return PrivateMessage(groupID: content.groupID, epoch: content.epoch, contentType: type, authenticatedData: content.authenticatedData,
                              encryptedSenderData: encSD, ciphertext: ciphertext)
    }

    /// Decrypts a PrivateMessage; once it has opened and parsed, the key used
    /// is deleted from `secretTree` (if it fails, `secretTree` is unchanged).
    /// The signature is not checked here: see ``verifySignature``.
    static func unprotectPrivate(suite: CipherSuite, _ m: PrivateMessage, groupID: [UInt8], epoch: UInt64,
                                 senderDataSecret: [UInt8], secretTree: inout SecretTree,
                                 isMember: (UInt32) -> Bool = { _ in true }) throws -> AuthenticatedContent {
        guard m.groupID == groupID else { throw MLSError(.wrongGroup, "group id") }
        guard m.epoch == epoch else { throw MLSError(.wrongEpoch, "epoch \(m.epoch)") }
        let (sdKey, sdNonce) = try senderDataKeyNonce(suite: suite, senderDataSecret: senderDataSecret, ciphertext: m.ciphertext)
        let sdBytes = try suite.aeadOpen(key: sdKey, nonce: sdNonce, aad: senderDataAAD(groupID: m.groupID, epoch: m.epoch, contentType: m.contentType),
                                         ciphertext: m.encryptedSenderData)
        var sdr = TLSReader(sdBytes)
        let leaf = try sdr.readUInt32()
        let generation = try sdr.readUInt32()
        let reuseGuard = try sdr.readBytes(4)
        try sdr.finish()
        // RFC 9420 §6.3.2: the sender's leaf must be non-blank (checked before any key is used).
        guard isMember(leaf) else { throw MLSError(.invalidMessage, "sender leaf \(leaf) is blank") }
        let (key, consumption) = try secretTree.keyForReceived(leaf: leaf, type: m.contentType == .application ? .application : .handshake,
                                                               generation: generation)
        let aad = contentAAD(groupID: m.groupID, epoch: m.epoch, contentType: m.contentType, authenticatedData: m.authenticatedData)
        let plain = try suite.aeadOpen(key: key.key, nonce: applyReuseGuard(key.nonce, reuseGuard), aad: aad, ciphertext: m.ciphertext)
        var r = TLSReader(plain)
        let content = try Content.decode(type: m.contentType, from: &r)
        let auth = try FramedContentAuthData(from: &r, contentType: m.contentType)
        while !r.isAtEnd {
            guard try r.readUInt8() == 0 else { throw MLSError(.invalidMessage, "non-zero padding") }
        }
        let framed = FramedContent(groupID: m.groupID, epoch: m.epoch, sender: .member(leafIndex: leaf),
                                   authenticatedData: m.authenticatedData, content: content)
        secretTree.consume(consumption)
        return AuthenticatedContent(wireFormat: .privateMessage, content: framed, auth: auth)
    }
}

/// Compares two byte strings in time independent of where they differ.
func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var d: UInt8 = 0
    for i in 0 ..< a.count { d |= a[i] ^ b[i] }
    return d == 0
}
