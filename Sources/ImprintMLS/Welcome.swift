/// The secrets a Welcome delivers to a new member (RFC 9420 §12.4.3.1).
public struct GroupSecrets: TLSCodable, Hashable {
    public var joinerSecret: [UInt8]
    public var pathSecret: [UInt8]?
    public var psks: [PreSharedKeyID]

    public init(joinerSecret: [UInt8], pathSecret: [UInt8]?, psks: [PreSharedKeyID]) {
        self.joinerSecret = joinerSecret
        self.pathSecret = pathSecret
        self.psks = psks
    }

    public init(from r: inout TLSReader) throws {
        joinerSecret = try r.readOpaque()
        pathSecret = try r.readOptional { try $0.readOpaque() }
        psks = try r.readList()
    }

    public func encode(to w: inout TLSWriter) {
        w.writeOpaque(joinerSecret)
        w.writeOptional(pathSecret) { $0.writeOpaque($1) }
        w.writeList(psks)
    }
}

/// GroupSecrets encrypted to one new member's KeyPackage.
public struct EncryptedGroupSecrets: TLSCodable, Hashable {
    public var newMember: [UInt8]
    public var encryptedGroupSecrets: HPKECiphertext
    public init(newMember: [UInt8], encryptedGroupSecrets: HPKECiphertext) {
        self.newMember = newMember
        self.encryptedGroupSecrets = encryptedGroupSecrets
    }
    public init(from r: inout TLSReader) throws {
        newMember = try r.readOpaque()
        encryptedGroupSecrets = try HPKECiphertext(from: &r)
    }
    public func encode(to w: inout TLSWriter) {
        w.writeOpaque(newMember)
        encryptedGroupSecrets.encode(to: &w)
    }
}

/// A Welcome message (RFC 9420 §12.4.3.1).
public struct Welcome: TLSCodable, Hashable {
    public var cipherSuite: CipherSuite
    public var secrets: [EncryptedGroupSecrets]
    public var encryptedGroupInfo: [UInt8]

    public init(cipherSuite: CipherSuite, secrets: [EncryptedGroupSecrets], encryptedGroupInfo: [UInt8]) {
        self.cipherSuite = cipherSuite
        self.secrets = secrets
        self.encryptedGroupInfo = encryptedGroupInfo
    }

    public init(from r: inout TLSReader) throws {
        cipherSuite = try CipherSuite(from: &r)
        secrets = try r.readList()
        encryptedGroupInfo = try r.readOpaque()
    }

    public func encode(to w: inout TLSWriter) {
        cipherSuite.encode(to: &w)
        w.writeList(secrets)
        w.writeOpaque(encryptedGroupInfo)
    }
}

extension Welcome {
    /// Finds and decrypts the GroupSecrets addressed to `keyPackageRef`.
    func decryptGroupSecrets(keyPackageRef: [UInt8], initPrivateKey: [UInt8]) throws -> GroupSecrets {
        guard let entry = secrets.first(where: { $0.newMember == keyPackageRef }) else {
            throw MLSError(.notFound, "no GroupSecrets for this KeyPackage")
        }
        let plain = try cipherSuite.decryptWithLabel(privateKey: initPrivateKey, label: "Welcome", context: encryptedGroupInfo,
                                                     kemOutput: entry.encryptedGroupSecrets.kemOutput,
                                                     ciphertext: entry.encryptedGroupSecrets.ciphertext)
        return try GroupSecrets(tlsBytes: plain)
    }

    /// welcome_key and welcome_nonce from the welcome_secret.
    static func welcomeKeyNonce(suite: CipherSuite, welcomeSecret: [UInt8]) throws -> (key: [UInt8], nonce: [UInt8]) {
        (try suite.expandWithLabel(secret: welcomeSecret, label: "key", context: [], length: suite.aeadKeyLength),
         try suite.expandWithLabel(secret: welcomeSecret, label: "nonce", context: [], length: suite.aeadNonceLength))
    }

    /// Decrypts the GroupInfo with the welcome_secret.
    func decryptGroupInfo(welcomeSecret: [UInt8]) throws -> GroupInfo {
        let (key, nonce) = try Welcome.welcomeKeyNonce(suite: cipherSuite, welcomeSecret: welcomeSecret)
        let plain = try cipherSuite.aeadOpen(key: key, nonce: nonce, aad: [], ciphertext: encryptedGroupInfo)
        let info = try GroupInfo(tlsBytes: plain)
        guard info.groupContext.cipherSuite == cipherSuite else { throw MLSError(.invalidMessage, "GroupInfo cipher suite differs from Welcome") }
        return info
    }
}
