import ImprintMLS
import ImprintMLSWire
import ImprintTestSupport
import Testing

/// `KeyPackageShape` (the Delivery Service's check) held to ImprintMLS's parser: every
/// KeyPackage ImprintMLS makes passes it, and no damaged message passes it that ImprintMLS
/// would fail to parse, so the DS never stores a package the clients cannot read.
@Suite struct KeyPackageShapeTests {
    static let suites: [CipherSuite] = [.x25519Aes128GcmSha256Ed25519, .p256Aes128GcmSha256P256, .x25519ChaCha20Poly1305Sha256Ed25519]

    static func message(_ suite: CipherSuite, name: String) throws -> [UInt8] {
        let key = try suite.generateSignatureKeyPair().privateKey
        let (keyPackage, _) = try KeyPackage.create(suite: suite, credential: .basic(identity: Array(name.utf8)), signaturePrivateKey: key)
        return MLSMessage.keyPackage(keyPackage).tlsBytes
    }

    @Test(arguments: suites)
    func everyKeyPackageImprintMLSMakesPasses(suite: CipherSuite) throws {
        let bytes = try Self.message(suite, name: "alice")
        let shape = try KeyPackageShape(bytes, cipherSuite: Int(suite.rawValue))
        #expect(shape.cipherSuite == suite.rawValue && shape.credentialType == 1 && shape.notBefore <= shape.notAfter)
        #expect(throws: KeyPackageShapeError.self) { try KeyPackageShape(bytes, cipherSuite: Int(suite.rawValue) + 1) }
    }

    @Test func damagedMessagesThatPassAreMessagesImprintMLSParses() throws {
        let seed = testSeed("KeyPackageShapeTests", fallback: 0x6b70_5348)
        var rng = SplitMix64(seed: seed)
        let original = try Self.message(.x25519Aes128GcmSha256Ed25519, name: "bob")
        var passed = 0, refused = 0
        for _ in 0..<3000 {
            var bytes = original
            switch rng.next() % 3 {
            case 0: bytes[Int(rng.next() % UInt64(bytes.count))] ^= UInt8(1 << (rng.next() % 8))
            case 1: bytes.removeLast(Int(rng.next() % UInt64(bytes.count)) + 1)
            default: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: Int(rng.next() % UInt64(bytes.count + 1)))
            }
            guard (try? KeyPackageShape(bytes, cipherSuite: 1)) != nil else { refused += 1; continue }
            passed += 1
            // What the DS accepts, a client parses as one KeyPackage message.
            let parsed = try? MLSMessage(tlsBytes: bytes)
            guard case .keyPackage? = parsed else {
                Issue.record("seed \(seed): the shape check passed bytes ImprintMLS cannot parse: \(bytes)")
                return
            }
        }
        #expect(refused > 0 && passed > 0, "passed \(passed), refused \(refused)")
    }

    /// `KeyPackage(published:cipherSuite:)`, the client side of the same leaf: a package
    /// ImprintMLS made comes back equal; one of another suite, or damaged so the shape check
    /// refuses it, is a typed `MLSError` before any full parse.
    @Test(arguments: suites)
    func publishedKeyPackagesGoThroughTheSharedCheck(suite: CipherSuite) throws {
        let key = try suite.generateSignatureKeyPair().privateKey
        let (keyPackage, _) = try KeyPackage.create(suite: suite, credential: .basic(identity: Array("carol".utf8)), signaturePrivateKey: key)
        let bytes = MLSMessage.keyPackage(keyPackage).tlsBytes
        #expect(try KeyPackage(published: bytes, cipherSuite: suite) == keyPackage)
        let other = Self.suites.first { $0 != suite }!
        #expect(throws: MLSError.self) { try KeyPackage(published: bytes, cipherSuite: other) }
        #expect(throws: MLSError.self) { try KeyPackage(published: Array(bytes.dropLast()), cipherSuite: suite) }
        #expect(throws: MLSError.self) { try KeyPackage(published: bytes + [0], cipherSuite: suite) }
    }
}
