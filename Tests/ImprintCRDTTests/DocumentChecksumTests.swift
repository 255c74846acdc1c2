import Testing
@testable import ImprintCRDT

/// The document frame's checksum (`docs/format.md`, "Document"): XXH64 as `save` writes it
/// (flag bit 1), SHA-256 as earlier builds wrote it.
struct DocumentChecksumTests {
    /// The reference implementation's XXH64 (xxHash 0.8.4, seed 0) of inputs that reach
    /// every branch: empty, the 1-byte, 4-byte and 8-byte tails, the 32-byte stripes and their
    /// remainder.
    @Test(arguments: [
        // Input i is byte i % 251.
        (0, 0xEF46_DB37_51D8_E999 as UInt64),
        (1, 0xE934_A84A_DB05_2768),
        (7, 0x14CC_643F_630C_72D2),
        (12, 0x424A_F23F_1F08_DCA5),
        (32, 0xCBF5_9C51_16FF_32B4),
        (33, 0x0C53_5D1A_CAFB_8EAD),
        (37, 0xD93F_A2DF_EE5C_24C9),
        (100, 0x6AC1_E580_3216_6597),
        (1000, 0xF306_F04A_A88B_54D3),
    ])
    func xxh64MatchesTheReference(length: Int, expected: UInt64) {
        let input = (0..<length).map { UInt8($0 % 251) }
        #expect(XXH64.hash(input) == expected)
    }

    @Test func xxh64OfText() {
        #expect(XXH64.hash(Array("a".utf8)) == 0xD24E_C4F1_A98C_6E5B)
        #expect(XXH64.hash(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
        #expect(XXH64.checksum(Array("abc".utf8)) == [0x99, 0x09, 0x77, 0xAD, 0xF5, 0x2C, 0xBC, 0x44])
    }

    static func sampleDocument() throws -> Document {
        let doc = Document(actor: ActorID(hex: "0707")!)
        try doc.change { tx in
            let body = try tx.put(.root, "body", .text)!
            try tx.splice(body, at: 0, delete: 0, insert: String(repeating: "The checksum covers every byte. ", count: 20))
        }
        return doc
    }

    /// `save` sets flag bit 1 and stores XXH64 of everything after the checksum; the same
    /// payload framed with SHA-256 (as builds before the flag wrote it) loads to the same
    /// document.
    @Test func saveWritesXXH64AndSHA256FramesStillLoad() throws {
        let doc = try Self.sampleDocument()
        let saved = doc.save()
        #expect(saved[5] == DocumentFormat.Checksum.flag)
        #expect(Array(saved[6..<14]) == XXH64.checksum(saved[14...]))
        let legacy = DocumentFormat.frame(try DocumentFormat.unframe(saved), version: saved[4], checksum: .sha256)
        #expect(legacy[5] == 0)
        #expect(Array(legacy[6..<14]) == Array(SHA256Digest.of(Array(legacy[14...])).prefix(8)))
        guard case .object(let body, .text)? = try doc.get(.root, "body") else {
            Issue.record("no body text")
            return
        }
        #expect(try Document.load(legacy).text(body) == doc.text(body))
        #expect(try Document.load(saved).text(body) == doc.text(body))
    }

    /// A flipped bit anywhere after the checksum, or in the checksum, fails the load with
    /// `checksumMismatch`, whichever checksum the frame has; so does a frame whose flag
    /// names the other checksum.
    @Test func damageFailsEitherChecksum() throws {
        let saved = try Self.sampleDocument().save()
        let legacy = DocumentFormat.frame(try DocumentFormat.unframe(saved), version: saved[4], checksum: .sha256)
        for frame in [saved, legacy] {
            for position in [6, 13, 14, frame.count / 2, frame.count - 1] {
                var damaged = frame
                damaged[position] ^= 0x10
                #expect { try Document.load(damaged) } throws: { ($0 as? CRDTError)?.code == .checksumMismatch }
            }
            var otherFlag = frame
            otherFlag[5] ^= DocumentFormat.Checksum.flag
            #expect { try Document.load(otherFlag) } throws: { ($0 as? CRDTError)?.code == .checksumMismatch }
        }
    }

    /// Flag bits this build does not know are refused as a newer format.
    @Test func unknownFlagsAreANewerFormat() throws {
        var saved = try Self.sampleDocument().save()
        saved[5] |= 4
        #expect { try Document.load(saved) } throws: { ($0 as? CRDTError)?.code == .unsupportedVersion }
    }
}
