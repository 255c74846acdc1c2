import Foundation
@testable import ImprintDelivery
import ImprintTestSupport
import Testing

/// Whatever the plain decoders accept, `JSONDecoder` must read to the same value; and they
/// must accept what clients actually send (else the fast path never runs).
@Suite struct PlainWireDecodingTests {
    private func plain<T>(_ text: [UInt8], _ make: (UnsafeRawBufferPointer) -> T?) -> T? {
        text.withUnsafeBytes { make($0) }
    }

    private func reference<T: Decodable>(_ type: T.Type, _ text: [UInt8]) -> T? {
        try? WireJSON.decoder().decode(type, from: Data(text))
    }

    static let sendInputs: [SendMessageInput] = [
        SendMessageInput(convoId: "c1", epoch: 0, messageType: .app, hash: String(repeating: "0", count: 64), size: 1024),
        SendMessageInput(convoId: "convo.with:odd~chars-_", epoch: 123_456_789_012, messageType: .commit, hash: "ab", size: 0, recordName: "r/1"),
        SendMessageInput(convoId: "", epoch: -5, messageType: .app, hash: "", size: -1, recordName: ""),
    ]

    static let claims: [ServiceAuthClaims] = [
        ServiceAuthClaims(
            iss: "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", aud: "did:web:ds.example",
            lxm: "blue.catbird.mls.sendMessage", iat: 1_763_717_400, exp: 1_763_717_700, jti: "6f1e2d3c-aaaa"),
        ServiceAuthClaims(iss: "i", aud: "a", lxm: "l", iat: 0, exp: -1, jti: ""),
    ]

    @Test func acceptsWhatTheEncoderWrites() throws {
        for input in Self.sendInputs {
            let text = Array(try WireJSON.encoder().encode(input))
            #expect(plain(text, SendMessageInput.init(plainJSON:)) == input)
        }
        for claims in Self.claims {
            let text = Array(try JSONEncoder().encode(claims))
            #expect(plain(text, ServiceAuthClaims.init(plainJSON:)) == claims)
        }
        let spaced = Array(" {\n\t\"convoId\" : \"c\" ,\"epoch\":1,\"messageType\":\"app\",\"hash\":\"h\",\"size\":2,\"recordName\":null}\r\n".utf8)
        #expect(plain(spaced, SendMessageInput.init(plainJSON:)) == SendMessageInput(convoId: "c", epoch: 1, messageType: .app, hash: "h", size: 2))
    }

    @Test func refusesOutsideThePlainSubset() {
        let refused = [
            #"{"convoId":"c","epoch":1.0,"messageType":"app","hash":"h","size":2}"#,
            #"{"convoId":"c","epoch":1e2,"messageType":"app","hash":"h","size":2}"#,
            #"{"convoId":"c","epoch":01,"messageType":"app","hash":"h","size":2}"#,
            #"{"convoId":"c\u0041","epoch":1,"messageType":"app","hash":"h","size":2}"#,
            #"{"convoId":"é","epoch":1,"messageType":"app","hash":"h","size":2}"#,
            #"{"convoId":"c","epoch":1,"messageType":"app","hash":"h","size":2,"extra":1}"#,
            #"{"convoId":"c","convoId":"d","epoch":1,"messageType":"app","hash":"h","size":2}"#,
            #"{"convoId":"c","epoch":1,"messageType":"other","hash":"h","size":2}"#,
            #"{"convoId":"c","epoch":null,"messageType":"app","hash":"h","size":2}"#,
            #"{"convoId":"c","epoch":"1","messageType":"app","hash":"h","size":2}"#,
            #"{"convoId":"c","epoch":1,"messageType":"app","hash":"h"}"#,
            #"{"convoId":"c","epoch":1,"messageType":"app","hash":"h","size":2} x"#,
            #"{"convoId":"c","epoch":1,"messageType":"app","hash":"h","size":2,}"#,
            #"{"convoId":"c","epoch":1234567890123456789,"messageType":"app","hash":"h","size":2}"#,
            #"[{"convoId":"c","epoch":1,"messageType":"app","hash":"h","size":2}]"#,
            "\u{FEFF}{\"convoId\":\"c\",\"epoch\":1,\"messageType\":\"app\",\"hash\":\"h\",\"size\":2}",
            "", "{", "}", "{}", "null",
        ]
        for text in refused {
            #expect(plain(Array(text.utf8), SendMessageInput.init(plainJSON:)) == nil, "\(text)")
        }
    }

    /// Random edits of valid texts (bytes replaced, inserted, deleted; members repeated):
    /// every text the plain decoders accept decodes to the same value with `JSONDecoder`.
    @Test func everyAcceptedMutationAgreesWithJSONDecoder() throws {
        var random = SplitMix64(seed: 0xD1B5_4A32_D192_ED03)
        let alphabet = Array(#"{}[]":,. -+0123456789eEnulltrfa\/"#.utf8) + [0x00, 0x09, 0x0A, 0x7F, 0xC3, 0xA9]
        var seeds: [[UInt8]] = try Self.sendInputs.map { Array(try WireJSON.encoder().encode($0)) }
        seeds += try Self.claims.map { Array(try JSONEncoder().encode($0)) }
        var accepted = 0
        for round in 0..<40_000 {
            var text = seeds[round % seeds.count]
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<max(1, text.count), using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where !text.isEmpty: text[at] = alphabet.randomElement(using: &random)!
                case 1: text.insert(alphabet.randomElement(using: &random)!, at: at)
                case 2 where !text.isEmpty: text.remove(at: at)
                default:
                    // Repeat a slice (often a whole member) somewhere else.
                    let end = min(text.count, at + Int.random(in: 1...24, using: &random))
                    text.insert(contentsOf: text[at..<end], at: Int.random(in: 0...text.count, using: &random))
                }
            }
            if let fast = plain(text, SendMessageInput.init(plainJSON:)) {
                accepted += 1
                #expect(reference(SendMessageInput.self, text) == fast, "\(String(decoding: text, as: UTF8.self))")
            }
            if let fast = plain(text, ServiceAuthClaims.init(plainJSON:)) {
                accepted += 1
                #expect(reference(ServiceAuthClaims.self, text) == fast, "\(String(decoding: text, as: UTF8.self))")
            }
        }
        #expect(accepted > 1000)  // the mutations do reach the accepting paths
    }
}
