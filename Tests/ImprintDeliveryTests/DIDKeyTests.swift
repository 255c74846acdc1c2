import Crypto
import Foundation
import ImprintDelivery
import ImprintEncoding
import ImprintTestSupport
import Testing

@Suite struct DIDKeyTests {
    @Test func base58KnownVectors() {
        #expect(Base58BTC.encode(Array("Hello World!".utf8)) == "2NEpo7TZRRrLZSi2U")
        #expect(Base58BTC.encode([0, 0, 1]) == "112")
        #expect(Base58BTC.encode([]) == "")
        #expect(Base58BTC.decode("2NEpo7TZRRrLZSi2U") == Array("Hello World!".utf8))
        #expect(Base58BTC.decode("112") == [0, 0, 1])
        #expect(Base58BTC.decode("0OIl") == nil)
    }

    @Test func base58RoundTripsRandomBytes() {
        let seed = testSeed("DIDKeyTests.base58RoundTripsRandomBytes", fallback: 0xBA5E_58)
        var generator = SplitMix64(seed: seed)
        for length in 0..<64 {
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if length % 4 == 0, !bytes.isEmpty { bytes[0] = 0 }  // leading zero bytes are '1's
            #expect(Base58BTC.decode(Base58BTC.encode(bytes)) == bytes, "seed \(seed) length \(length)")
        }
    }

    @Test func ed25519DIDKeyRoundTrips() throws {
        let key = Curve25519.Signing.PrivateKey()
        let identity = DIDKey(publicKey: key.publicKey)
        #expect(identity.did.hasPrefix("did:key:z6Mk"))
        let parsed = try DIDKey(did: identity.did)
        #expect(parsed.publicKeyBytes == Array(key.publicKey.rawRepresentation))
    }

    /// Ed25519 did:keys with the raw public key their DID documents list (as
    /// `publicKeyBase58`, an Ed25519VerificationKey2018), from published did:key resolver test
    /// fixtures; the bytes here are hex, so the check does not lean on our own base58 codec.
    static let knownKeys: [(did: String, publicKeyHex: String)] = [
        ("did:key:z6MkmjY8GnV5i9YTDtPETC2uUAW6ejw3nk5mXF5yci5ab7th", "6c2d48b1605684ef94363dc6158eeb6577466e1a36a740f2fc624617edb7712e"),
        ("did:key:z6Mkgg342Ycpuk263R9d8Aq6MUaxPn1DDeHyGo38EefXmgDL", "20fd3bd58fcc1bea2f34f3092168fbe58caf803f23d2d0bbe043007ef4485a87"),
        ("did:key:z6MkvePyWAApUVeDboZhNbckaWHnqtD6pCETd6xoqGbcpEBV", "f095587d386a93f1b18f7fe2ed47cc790dc86ea548c1672c6fc43b36829c90bc"),
    ]

    @Test func knownVectorsDecodeToTheirKeyBytes() throws {
        for (did, hex) in Self.knownKeys {
            let parsed = try DIDKey(did: did)
            #expect(parsed.publicKeyBytes == Hex.decode(hex), "\(did)")
            let key = try Curve25519.Signing.PublicKey(rawRepresentation: try #require(Hex.decode(hex)))
            #expect(DIDKey(publicKey: key).did == did)
        }
    }

    @Test(arguments: [
        "did:web:example.com", "did:key:", "did:key:z", "did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme",
        "did:key:z6Mk0000", "did:key:m6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
    ])
    func rejectsNonEd25519DIDs(did: String) {
        #expect(throws: DIDKeyError.self) { try DIDKey(did: did) }
    }
}

@Suite struct ServiceAuthSignerTests {
    @Test func tokenHasContractShape() throws {
        let signer = ServiceAuthSigner()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let token = try signer.token(audience: "did:web:ds.example", method: "blue.catbird.mls.sendMessage", lifetime: 120, now: now)
        let parts = token.split(separator: ".")
        #expect(parts.count == 3)
        #expect(!token.contains("="))
        let header = try JSONDecoder().decode(ServiceAuthHeader.self, from: try #require(Base64URL.decode(parts[0])))
        #expect(header == ServiceAuthHeader(alg: "EdDSA", typ: "JWT"))
        let claims = try JSONDecoder().decode(ServiceAuthClaims.self, from: try #require(Base64URL.decode(parts[1])))
        #expect(claims.iss == signer.did)
        #expect(claims.aud == "did:web:ds.example")
        #expect(claims.lxm == "blue.catbird.mls.sendMessage")
        #expect(claims.iat == 1_800_000_000)
        #expect(claims.exp == 1_800_000_120)
        #expect(!claims.jti.isEmpty)
        let signature = try #require(Base64URL.decode(parts[2]))
        #expect(signer.identity.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        let second = try signer.token(audience: "did:web:ds.example", method: "blue.catbird.mls.sendMessage", now: now)
        #expect(second != token)
    }

    @Test func base64URLRejectsPaddingAndStandardAlphabet() {
        #expect(Base64URL.decode("AA==") == nil)
        #expect(Base64URL.decode("a+b/") == nil)
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("_-8") == Data([0xff, 0xef]))
        #expect(Base64URL.encode(Data([0xff, 0xef])) == "_-8")
    }
}
