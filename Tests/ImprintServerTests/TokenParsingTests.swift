import Foundation
import ImprintServerTestSupport
import ImprintDelivery
@testable import ImprintServer
import Testing

/// The verifier's byte-level shortcuts for ASCII tokens (splitting, the scheme check, plain
/// claims) must read every token exactly as the Character-level and `JSONDecoder` paths do.
@Suite struct TokenParsingTests {
    /// Every string of up to 6 bytes over separators, blanks, CR LF and a letter.
    @Test func asciiSplitMatchesCharacterSplit() {
        let alphabet = Array(" .\t\r\na".utf8)
        var texts: [[UInt8]] = [[]]
        var previous: [[UInt8]] = [[]]
        for _ in 1...6 {
            previous = previous.flatMap { text in alphabet.map { text + [$0] } }
            texts += previous
        }
        for bytes in texts {
            let text = Substring(String(decoding: bytes, as: UTF8.self))
            #expect(
                ServiceAuthVerifier.splitASCII(text, on: UInt8(ascii: "."), maxSplits: .max, omittingEmpty: false)
                    == text.split(separator: ".", omittingEmptySubsequences: false), "\(bytes)")
            #expect(
                ServiceAuthVerifier.splitASCII(text, on: UInt8(ascii: " "), maxSplits: 1, omittingEmpty: true)
                    == text.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true), "\(bytes)")
        }
    }

    @Test func bearerCheckMatchesLowercasing() {
        for position in 0..<6 {
            for byte in UInt8(0)..<0x80 {
                var scheme = Array("bEaReR".utf8)
                scheme[position] = byte
                let text = Substring(String(decoding: scheme, as: UTF8.self))
                #expect(ServiceAuthVerifier.isBearerASCII(text) == (text.lowercased() == "bearer"), "\(scheme)")
            }
        }
        for text in ["", "bearer ", "bearers", "beare", "BEARER", "Bearer"] {
            #expect(ServiceAuthVerifier.isBearerASCII(Substring(text)) == (text.lowercased() == "bearer"))
        }
    }

    @Test func claimsDecodeAsJSONDecoderDecodesThem() throws {
        let texts = [
            #"{"aud":"did:web:x","exp":20,"iat":10,"iss":"did:key:z6Mk","jti":"j","lxm":"blue.catbird.mls.sendMessage"}"#,
            #"{"aud":"did:web:x","exp":20,"iat":10,"iss":"did:key:z6Mk","jti":"j\u0001","lxm":"m"}"#,
            #"{"aud":"did:web:x","exp":20.0,"iat":10,"iss":"did:key:z6Mk","jti":"j","lxm":"m"}"#,
            #"{"aud":"did:web:x","exp":20,"iat":10,"iss":"did:key:z6Mk","jti":"j","lxm":"m","extra":[1]}"#,
            #"{"aud":"did:web:x","exp":20,"iat":10,"iss":"did:key:z6Mk","jti":"j"}"#,
            #"{"aud":"did:web:x","exp":"20","iat":10,"iss":"did:key:z6Mk","jti":"j","lxm":"m"}"#,
            "not json",
        ]
        for text in texts {
            let reference = try? JSONDecoder().decode(ServiceAuthClaims.self, from: Data(text.utf8))
            #expect(ServiceAuthVerifier.decodeClaims(Data(text.utf8)) == reference, "\(text)")
        }
        #expect(ServiceAuthVerifier.decodeClaims(Data(texts[0].utf8)) != nil)
    }

    /// Whole headers through `verify`: the ASCII path accepts what it should and refuses with
    /// the same errors; a non-ASCII header still takes the Character path.
    @Test func verifyReadsHeadersAsBefore() async throws {
        let signer = ServiceAuthSigner()
        let verifier = ServiceAuthVerifier(serviceDID: "did:web:ds.test", replayGuard: TokenReplayCache())
        let method = DeliveryMethod.sendMessage
        func outcome(_ header: String) async -> String {
            do {
                let admission = try await verifier.verify(authorization: header, method: method)
                return "ok \(admission.issuer)"
            } catch let error as DeliveryError {
                return "\(error.name): \(error.message)"
            } catch {
                return "\(error)"
            }
        }
        let token = try signer.token(audience: "did:web:ds.test", method: method.nsid)
        #expect(await outcome("Bearer \(token)") == "ok \(signer.did)")
        #expect(await outcome("bEARER  \t\(token)\t ") == "ok \(signer.did)")
        #expect(await outcome("Bearer") == "AuthRequired: expected a Bearer token")
        #expect(await outcome("Basic \(token)") == "AuthRequired: expected a Bearer token")
        #expect(await outcome("Bearer \(token).") == "InvalidToken: not a compact JWS")
        let parts = token.split(separator: ".")
        #expect(await outcome("Bearer \(parts[0]).\(parts[1]).\u{301}\(parts[2])") == "InvalidToken: not a compact JWS")
        #expect(await outcome("Bearer \(parts[0]).\(parts[1]).é\(parts[2])") == "InvalidToken: garbled signature")
        #expect(await outcome("Bearer\u{301} \(token)") == "AuthRequired: expected a Bearer token")
    }
}
