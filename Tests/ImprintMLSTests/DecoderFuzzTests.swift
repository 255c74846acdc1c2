import ImprintEncoding
import Foundation
import Testing
@testable import ImprintMLS
import ImprintTestSupport

@Suite struct DecoderFuzzTests {
    /// A decoder, returning the decoded value's own encoding.
    typealias Decoder = (String, @Sendable ([UInt8]) throws -> [UInt8])

    static let decoders: [Decoder] = [
        ("MLSMessage", { try MLSMessage(tlsBytes: $0).tlsBytes }),
        ("KeyPackage", { try KeyPackage(tlsBytes: $0).tlsBytes }),
        ("LeafNode", { try LeafNode(tlsBytes: $0).tlsBytes }),
        ("RatchetTree", { try RatchetTreeNodes(tlsBytes: $0).tlsBytes }),
        ("GroupSecrets", { try GroupSecrets(tlsBytes: $0).tlsBytes }),
        ("GroupInfo", { try GroupInfo(tlsBytes: $0).tlsBytes }),
        ("Welcome", { try Welcome(tlsBytes: $0).tlsBytes }),
        ("Commit", { try Commit(tlsBytes: $0).tlsBytes }),
        ("Proposal", { try Proposal(tlsBytes: $0).tlsBytes }),
        ("PreSharedKeyID", { try PreSharedKeyID(tlsBytes: $0).tlsBytes }),
        ("AuthenticatedContent", { try AuthenticatedContent(tlsBytes: $0).tlsBytes }),
        ("UpdatePath", { try UpdatePath(tlsBytes: $0).tlsBytes }),
        ("GroupContext", { try GroupContext(tlsBytes: $0).tlsBytes }),
    ]

    /// Valid encodings from messages.json to mutate (first records only).
    static func corpus() throws -> [[UInt8]] { try namedCorpus().map(\.1) }

    static func namedCorpus() throws -> [(String, [UInt8])] {
        let path = VectorFileTests.vectorDir + "/messages.json"
        let arr = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [[String: Any]] ?? []
        var out: [(String, [UInt8])] = []
        for rec in arr.prefix(3) {
            for (k, v) in rec.sorted(by: { $0.key < $1.key }) {
                if let s = v as? String, let b = try? hexBytes(s), b.count < 20000 { out.append((k, b)) }
            }
        }
        return out
    }

    static func hexBytes(_ s: String) throws -> [UInt8] {
        guard let bytes = Hex.decode(s) else { throw MLSError(.invalidValue) }
        return bytes
    }

    @Test func mutatedInputsThrowTypedErrors() throws {
        let seed = testSeed("DecoderFuzzTests (MLS)", fallback: 0x1F2E_3D4C)
        var rng = SplitMix64(seed: seed)
        let corpus = try Self.corpus()
        try #require(!corpus.isEmpty)
        var nonMLSErrors: [String] = []
        var notCanonical: [String] = []
        var decodedCount = 0, thrownCount = 0
        for iteration in 0 ..< 1500 {
            var input = corpus[Int(rng.next() % UInt64(corpus.count))]
            switch rng.next() % 4 {
            case 0 where !input.isEmpty: // truncation
                input = Array(input.prefix(Int(rng.next() % UInt64(input.count))))
            case 1 where !input.isEmpty: // bit flips
                for _ in 0 ... (rng.next() % 4) { input[Int(rng.next() % UInt64(input.count))] ^= UInt8(1 << (rng.next() % 8)) }
            case 2: // random bytes
                input = (0 ..< Int(rng.next() % 200)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            default: // overwrite a byte with an extreme value (hits varint prefixes and lengths)
                if !input.isEmpty { input[Int(rng.next() % UInt64(input.count))] = [0x00, 0x3f, 0x40, 0x7f, 0x80, 0xbf, 0xc0, 0xff][Int(rng.next() % 8)] }
            }
            for (name, decode) in Self.decoders {
                do {
                    // MLS encodings are canonical (minimal varints, 0/1 optionals and
                    // booleans, no trailing bytes), so whatever decodes must encode back to
                    // exactly the input: anything else means the decoder accepted bytes the
                    // encoder never writes, and two peers could disagree about one message.
                    let encoded = try decode(input)
                    if encoded != input { notCanonical.append("seed \(seed) iteration \(iteration) \(name): \(Hex.encode(input).prefix(80))") }
                    decodedCount += 1
                } catch is MLSError {
                    thrownCount += 1
                } catch {
                    nonMLSErrors.append("seed \(seed) iteration \(iteration) \(name): \(error)")
                }
            }
        }
        #expect(nonMLSErrors.isEmpty, "fuzz seed \(seed): \(nonMLSErrors.prefix(5))")
        #expect(notCanonical.isEmpty, "decoded but not canonical: \(notCanonical.prefix(5))")
        print("DecoderFuzzTests (MLS): seed \(seed): \(decodedCount) decoded and re-encoded exactly, \(thrownCount) refused")
    }

    @Test func unmutatedCorpusDecodesSomewhere() throws {
        // Sanity check that the corpus is meaningful: the MLSMessage inputs decode unmutated.
        let messages = try Self.namedCorpus().filter { $0.0.hasPrefix("mls_") || $0.0.hasSuffix("_message") || $0.0.hasPrefix("public_message") }
        #expect(messages.count >= 15)
        for (name, input) in messages {
            #expect(throws: Never.self, "\(name)") { _ = try MLSMessage(tlsBytes: input) }
        }
    }
}
