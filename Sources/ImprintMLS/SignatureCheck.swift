/// The signature over a FramedContent (RFC 9420 §6.1) that one message needs verified,
/// held as plain bytes so that a batch of them can be checked on several threads.
struct SignatureCheck: Sendable {
    var publicKey: [UInt8]
    var signature: [UInt8]
    /// The `FramedContentTBS` bytes that were signed.
    var content: [UInt8]

    init(_ ac: AuthenticatedContent, context: GroupContext?, publicKey: [UInt8]) {
        self.publicKey = publicKey
        signature = ac.auth.signature
        content = MessageProtection.framedContentTBS(wireFormat: ac.wireFormat, content: ac.content, context: context)
    }

    func isValid(suite: CipherSuite) throws -> Bool {
        try suite.verifyWithLabel(repeatedSigner: publicKey, label: "FramedContentTBS", content: content, signature: signature)
    }

    func verify(suite: CipherSuite) throws {
        guard try isValid(suite: suite) else { throw MLSError(.signatureInvalid, "FramedContent signature") }
    }
}
