import Crypto
import Foundation
import ImprintDelivery
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
        var generator = SystemRandomNumberGenerator()
        for length in 0..<64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(Base58BTC.decode(Base58BTC.encode(bytes)) == bytes)
        }
    }

    @Test func ed25519DIDKeyRoundTrips() throws {
        let key = Curve25519.Signing.PrivateKey()
        let identity = DIDKey(publicKey: key.publicKey)
        #expect(identity.did.hasPrefix("did:key:z6Mk"))
        let parsed = try DIDKey(did: identity.did)
        #expect(parsed.publicKeyBytes == Array(key.publicKey.rawRepresentation))
    }

    @Test func knownSpecVector() throws {
        // From the did:key specification's Ed25519 examples.
        let did = "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"
        let parsed = try DIDKey(did: did)
        #expect(parsed.publicKeyBytes.count == 32)
        #expect(DIDKey(publicKey: parsed.publicKey).did == did)
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
