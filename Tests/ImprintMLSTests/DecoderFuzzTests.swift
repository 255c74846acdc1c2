import ImprintEncoding
import Foundation
import Testing
@testable import ImprintMLS
import ImprintTestSupport

@Suite struct DecoderFuzzTests {
    typealias Decoder = (String, @Sendable ([UInt8]) throws -> Void)

    static let decoders: [Decoder] = [
        ("MLSMessage", { _ = try MLSMessage(tlsBytes: $0) }),
        ("KeyPackage", { _ = try KeyPackage(tlsBytes: $0) }),
        ("LeafNode", { _ = try LeafNode(tlsBytes: $0) }),
        ("RatchetTree", { _ = try RatchetTreeNodes(tlsBytes: $0) }),
        ("GroupSecrets", { _ = try GroupSecrets(tlsBytes: $0) }),
        ("GroupInfo", { _ = try GroupInfo(tlsBytes: $0) }),
        ("Welcome", { _ = try Welcome(tlsBytes: $0) }),
        ("Commit", { _ = try Commit(tlsBytes: $0) }),
        ("Proposal", { _ = try Proposal(tlsBytes: $0) }),
        ("PreSharedKeyID", { _ = try PreSharedKeyID(tlsBytes: $0) }),
        ("AuthenticatedContent", { _ = try AuthenticatedContent(tlsBytes: $0) }),
        ("UpdatePath", { _ = try UpdatePath(tlsBytes: $0) }),
        ("GroupContext", { _ = try GroupContext(tlsBytes: $0) }),
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
        let seed = UInt64(ProcessInfo.processInfo.environment["MLS_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x1F2E_3D4C)
        var rng = SplitMix64(seed: seed)
        let corpus = try Self.corpus()
        try #require(!corpus.isEmpty)
        var nonMLSErrors: [String] = []
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
                    try decode(input)
                    decodedCount += 1
                } catch is MLSError {
                    thrownCount += 1
                } catch {
                    nonMLSErrors.append("seed \(seed) iteration \(iteration) \(name): \(error)")
                }
            }
        }
        #expect(nonMLSErrors.isEmpty, "fuzz seed \(seed): \(nonMLSErrors.prefix(5))")
        #expect(thrownCount > 0)
        #expect(decodedCount + thrownCount == 1500 * Self.decoders.count)
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
