import Crypto
import Foundation
import ImprintServerTestSupport
import ImprintDelivery
import ImprintServer
import Testing

/// Every way a token can be wrong gets a 401 with the contract's error names.
@Suite struct AuthMatrixTests {
    static let method = DeliveryMethod.getConvos

    struct HostileToken: Sendable, CustomTestStringConvertible {
        let name: String
        let expectedError: String
        let make: @Sendable (ServiceAuthSigner) throws -> String?
        var testDescription: String { name }
    }

    static func claims(
        _ signer: ServiceAuthSigner, aud: String = RunningServer.serviceDID, lxm: String = method.nsid,
        iat: Int64? = nil, lifetime: Int64 = 60, jti: String = UUID().uuidString
    ) -> ServiceAuthClaims {
        let issued = iat ?? Int64(Date().timeIntervalSince1970)
        return ServiceAuthClaims(iss: signer.did, aud: aud, lxm: lxm, iat: issued, exp: issued + lifetime, jti: jti)
    }

    static let cases: [HostileToken] = [
        HostileToken(name: "missing", expectedError: "AuthRequired") { _ in nil },
        HostileToken(name: "not bearer", expectedError: "AuthRequired") { _ in "Basic dXNlcjpwYXNz" },
        HostileToken(name: "garbled", expectedError: "InvalidToken") { _ in "Bearer not.a.jwt!!" },
        HostileToken(name: "two segments", expectedError: "InvalidToken") { _ in "Bearer eyJhbGciOiJFZERTQSJ9.e30" },
        HostileToken(name: "alg none", expectedError: "InvalidToken") { signer in
            let header = Base64URL.encode(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
            let body = Base64URL.encode(try JSONEncoder().encode(claims(signer)))
            return "Bearer \(header).\(body)."
        },
        HostileToken(name: "alg HS256", expectedError: "InvalidToken") { signer in
            "Bearer " + (try signer.sign(header: ServiceAuthHeader(alg: "HS256"), claims: claims(signer)))
        },
        HostileToken(name: "wrong audience", expectedError: "InvalidToken") { signer in
            "Bearer " + (try signer.sign(header: ServiceAuthHeader(alg: "EdDSA"), claims: claims(signer, aud: "did:web:elsewhere.test")))
        },
        HostileToken(name: "wrong method", expectedError: "InvalidToken") { signer in
            "Bearer " + (try signer.sign(header: ServiceAuthHeader(alg: "EdDSA"), claims: claims(signer, lxm: DeliveryMethod.sendMessage.nsid)))
        },
        HostileToken(name: "expired", expectedError: "InvalidToken") { signer in
            let iat = Int64(Date().timeIntervalSince1970) - 400
            return "Bearer " + (try signer.sign(header: ServiceAuthHeader(alg: "EdDSA"), claims: claims(signer, iat: iat, lifetime: 200)))
        },
        HostileToken(name: "not yet valid", expectedError: "InvalidToken") { signer in
            let iat = Int64(Date().timeIntervalSince1970) + 120
            return "Bearer " + (try signer.sign(header: ServiceAuthHeader(alg: "EdDSA"), claims: claims(signer, iat: iat)))
        },
        HostileToken(name: "too long-lived", expectedError: "InvalidToken") { signer in
            "Bearer " + (try signer.sign(header: ServiceAuthHeader(alg: "EdDSA"), claims: claims(signer, lifetime: 301)))
        },
        HostileToken(name: "forged signature", expectedError: "InvalidToken") { signer in
            // Claims name the signer's DID but are signed by another key.
            let forger = ServiceAuthSigner()
            return "Bearer " + (try forger.sign(header: ServiceAuthHeader(alg: "EdDSA"), claims: claims(signer)))
        },
        HostileToken(name: "tampered claims", expectedError: "InvalidToken") { signer in
            let token = try signer.token(audience: RunningServer.serviceDID, method: method.nsid)
            let parts = token.split(separator: ".")
            let other = Base64URL.encode(try JSONEncoder().encode(claims(signer, jti: "other")))
            return "Bearer \(parts[0]).\(other).\(parts[2])"
        },
        HostileToken(name: "unsupported DID method", expectedError: "InvalidToken") { signer in
            var forged = claims(signer)
            forged.iss = "did:plc:abcdefghijklmnop"
            return "Bearer " + (try signer.sign(header: ServiceAuthHeader(alg: "EdDSA"), claims: forged))
        },
        HostileToken(name: "jti with a NUL", expectedError: "InvalidToken") { signer in
            // Validly signed, but a jti the replay guard could not store (PostgreSQL text refuses NUL).
            "Bearer " + (try signer.sign(header: ServiceAuthHeader(alg: "EdDSA"), claims: claims(signer, jti: "a\u{0}b")))
        },
        HostileToken(name: "did:key that is not Ed25519", expectedError: "InvalidToken") { signer in
            var forged = claims(signer)
            forged.iss = "did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme"
            return "Bearer " + (try signer.sign(header: ServiceAuthHeader(alg: "EdDSA"), claims: forged))
        },
    ]

    @Test(arguments: StoreKind.available, cases)
    func rejectsHostileToken(kind: StoreKind, hostile: HostileToken) async throws {
        try await withServer(kind) { server in
            let signer = ServiceAuthSigner()
            var headers: [(String, String)] = []
            if let value = try hostile.make(signer) { headers.append(("Authorization", value)) }
            let response = try await RawHTTP.send(server, .GET, Self.method.path, headers: headers)
            #expect(response.status == 401, "\(hostile.name): \(response.text)")
            #expect(response.errorName == hostile.expectedError, "\(hostile.name): \(response.text)")
        }
    }

    @Test(arguments: StoreKind.available)
    func acceptsValidTokenOnceAndRejectsReplay(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let signer = ServiceAuthSigner()
            let token = try signer.token(audience: RunningServer.serviceDID, method: Self.method.nsid)
            let first = try await RawHTTP.send(server, .GET, Self.method.path, headers: [("Authorization", "Bearer \(token)")])
            #expect(first.status == 200, "\(first.text)")
            let replay = try await RawHTTP.send(server, .GET, Self.method.path, headers: [("Authorization", "Bearer \(token)")])
            #expect(replay.status == 401)
            #expect(replay.errorName == "InvalidToken")
            #expect(replay.errorBody?.message.contains("replayed") == true)
        }
    }

    @Test(arguments: StoreKind.available)
    func acceptsMaximalLifetimeAndClockSkew(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let signer = ServiceAuthSigner()
            // Issued 50 s in the future (inside the 60 s skew), living exactly 300 s.
            let iat = Int64(Date().timeIntervalSince1970) + 50
            let token = try signer.sign(header: ServiceAuthHeader(alg: "EdDSA"), claims: Self.claims(signer, iat: iat, lifetime: 300))
            let response = try await RawHTTP.send(server, .GET, Self.method.path, headers: [("Authorization", "Bearer \(token)")])
            #expect(response.status == 200, "\(response.text)")
        }
    }

    @Test(arguments: StoreKind.available)
    func healthNeedsNoToken(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let health = try await server.client().health()
            #expect(health.status == "ok")
            #expect(health.did == RunningServer.serviceDID)
            #expect(health.version == DeliveryServerConfiguration.serviceVersion && health.version.hasPrefix("1."))
        }
    }
}
