/// An MLS signature key pair of one identity for one cipher suite, with the credential
/// (the basic credential's identity bytes) it signs for. The private key is sealed at rest;
/// the public key and credential are public and stored in the clear.
public struct SignatureKey: Hashable, Sendable {
    /// The MLS cipher suite (RFC 9420 §17.1) the key belongs to.
    public var suite: UInt16
    public var publicKey: [UInt8]
    public var privateKey: [UInt8]
    public var credential: [UInt8]

    public init(suite: UInt16, publicKey: [UInt8], privateKey: [UInt8], credential: [UInt8]) {
        self.suite = suite
        self.publicKey = publicKey
        self.privateKey = privateKey
        self.credential = credential
    }
}
