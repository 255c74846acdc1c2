import Foundation
@testable import ImprintZones
import ImprintTestSupport
import Testing

/// The folder store's decoders and names against hostile input: escaped zone ids, entry
/// files, change tokens.
@Suite("Folder zone formats")
struct FolderFormatTests {
    @Test func zoneDirectoryNamesAreSafeReversibleAndCollisionFree() {
        let seed = testSeed("zoneDirectoryNames", fallback: 0xd1_2e_c7)
        var rng = SplitMix64(seed: seed)
        let alphabet = Array("aAzZ09_-.:/\\ ~ü€😀%\u{7f}") + ["\u{0}"]
        var seen: [String: String] = [:]
        for _ in 0..<3000 {
            let id = String((0..<Int(rng.next() % 12 + 1)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
            let name = ZoneDirectoryName.encode(id)
            #expect(name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F }, "\(name)")
            #expect(ZoneDirectoryName.decode(name) == id)
            if let other = seen[name] { #expect(other == id, "collision: \(other) and \(id)") }
            seen[name] = id
        }
        #expect(ZoneDirectoryName.encode("doc_A") != ZoneDirectoryName.encode("doc_a"))
        #expect(ZoneDirectoryName.encode("inbox_did:key:z6Mk") == "inbox_5fdid_3akey_3az6_4dk")
        #expect(!ZoneDirectoryName.encode("..").contains("."))
        // Only canonical names decode.
        #expect(FolderZoneLayout.entrySeq(fileName: "ffffffffffffffff.rec") == nil && FolderZoneLayout.entrySeq(fileName: "4000000000000000.rec") == 1 << 62)
        for bad in ["", "_", "_4", "_4g", "_4G", "_61", "a.b", "A", "_c3", "doc_5F"] { #expect(ZoneDirectoryName.decode(bad) == nil, "\(bad)") }
        // The longest id fits a file name.
        #expect(ZoneDirectoryName.encode(String(repeating: "Z", count: ZoneLimits.zoneIdBytes)).utf8.count <= 255)
    }

    static func sampleEntry() -> FolderZoneEntry {
        FolderZoneEntry(writer: "laptop", seq: 7, savedAt: 1_790_000_000_000, saves: [
            .init(recordName: "r1", recordType: "change", fields: ZoneRecordFields(convoId: "c", epoch: 2, seq: 3, chunkIndex: 0, chunkCount: 1,
                                                                                   payloadHash: SHA256Hex.digest([1])),
                  asset: ZoneAsset(of: [1])),
        ], deletes: ["old"])
    }

    @Test func entriesRoundTripAndOnlyInTheirPlace() throws {
        let entry = Self.sampleEntry()
        let bytes = try entry.encoded()
        #expect(try FolderZoneEntry.decode(bytes, writer: "laptop", seq: 7, path: "p") == entry)
        #expect(throws: ZoneError.self) { try FolderZoneEntry.decode(bytes, writer: "desktop", seq: 7, path: "p") }
        #expect(throws: ZoneError.self) { try FolderZoneEntry.decode(bytes, writer: "laptop", seq: 8, path: "p") }
    }

    /// Every prefix, seeded bit flips and byte noise: a typed `damagedRecord`, never a crash.
    @Test func hostileEntryBytesAreTypedErrors() throws {
        let seed = testSeed("hostileEntryBytes", fallback: 0xbad_e17)
        var rng = SplitMix64(seed: seed)
        let valid = try Self.sampleEntry().encoded()
        func expectDamaged(_ bytes: [UInt8]) {
            do {
                _ = try FolderZoneEntry.decode(bytes, writer: "laptop", seq: 7, path: "p")
                Issue.record("hostile entry decoded (seed \(seed))")
            } catch let error as ZoneError {
                #expect(error.code == .damagedRecord)
            } catch {
                Issue.record("untyped error \(error)")
            }
        }
        for length in 0..<valid.count { expectDamaged(Array(valid.prefix(length))) }
        for _ in 0..<2000 {
            var bytes = valid
            for _ in 0..<Int(rng.next() % 3 + 1) { bytes[Int(rng.next() % UInt64(bytes.count))] ^= UInt8(1 << (rng.next() % 8)) }
            if bytes != valid { expectDamaged(bytes) } // two flips of one bit cancel out
        }
        for _ in 0..<300 { expectDamaged((0..<Int(rng.next() % 400)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }) }
        expectDamaged(valid + [0])
        expectDamaged([UInt8](repeating: 0x7b, count: FolderZoneEntry.maximumFileBytes + 1))
    }

    /// Well-formed, correctly check-summed files whose content breaks the rules.
    @Test func checksummedButInvalidEntriesAreTypedErrors() throws {
        func file(_ json: String) -> [UInt8] {
            Array("\(FolderZoneEntry.header)\n\(json)\nsha256 \(SHA256Hex.digest(Array(json.utf8)))\n".utf8)
        }
        let hash = String(repeating: "a", count: 64)
        let save = #"{"recordName":"r","recordType":"change","fields":{},"asset":{"hash":"\#(hash)","size":1}}"#
        let cases = [
            #"{}"#, #"[]"#, "null", #"{"writer":"laptop","seq":7,"savedAt":1,"saves":[],"deletes":[]}"#,
            #"{"writer":"laptop","seq":7,"savedAt":1,"saves":[\#(save.replacingOccurrences(of: "\"size\":1", with: "\"size\":-1"))],"deletes":[]}"#,
            #"{"writer":"laptop","seq":7,"savedAt":1,"saves":[\#(save.replacingOccurrences(of: hash, with: "../../x"))],"deletes":[]}"#,
            #"{"writer":"laptop","seq":7,"savedAt":1,"saves":[\#(save),\#(save)],"deletes":[]}"#,
            #"{"writer":"laptop","seq":7,"savedAt":1,"saves":[\#(save.replacingOccurrences(of: "\"fields\":{}", with: "\"fields\":{\"chunkIndex\":5,\"chunkCount\":2}"))],"deletes":[]}"#,
            #"{"writer":"laptop","seq":7,"savedAt":1,"saves":[],"deletes":["bad\u0000name"]}"#,
            #"{"writer":"laptop","seq":7,"savedAt":1,"saves":[],"deletes":[\#(Array(repeating: "\"n\"", count: 1001).joined(separator: ","))]}"#,
            #"{"writer":"laptop","seq":99999999999999999999999,"savedAt":1,"saves":[],"deletes":["x"]}"#,
            #"{"writer":"laptop","seq":7,"savedAt":9223372036854775807,"saves":[],"deletes":["x"]}"#,
            #"{"writer":"laptop","seq":7,"savedAt":-1,"saves":[],"deletes":["x"]}"#,
        ]
        for json in cases {
            #expect(throws: ZoneError.self, "\(json.prefix(80))") { try FolderZoneEntry.decode(file(json), writer: "laptop", seq: 7, path: "p") }
        }
        #expect(try FolderZoneEntry.decode(file(#"{"writer":"laptop","seq":7,"savedAt":1,"saves":[\#(save)],"deletes":[]}"#),
                                           writer: "laptop", seq: 7, path: "p").saves.count == 1)
    }

    @Test func hostileChangeTokensAreExpired() throws {
        var vector = FolderChangeToken(incarnation: "inc")
        for seq in [1, 2, 5, 9] as [UInt64] { vector.insert(writer: "laptop", seq: seq) }
        #expect(vector.writers["laptop"] == .init(low: 2, above: [5, 9]))
        let parsed = try FolderChangeToken(parsing: vector.token, incarnation: "inc")
        #expect(parsed == vector)
        func wire(_ json: String) -> ZoneChangeToken { ZoneChangeToken(rawValue: "f1." + Data(json.utf8).base64EncodedString()) }
        for hostile in [wire("{}"), wire(#"{"z":"inc","w":{"Laptop":[1]}}"#), wire(#"{"z":"inc","w":{"laptop":[]}}"#),
                        wire(#"{"z":"inc","w":{"laptop":[5,3]}}"#), wire(#"{"z":"other","w":{}}"#), wire(#"{"z":"inc","w":{"laptop":[-1]}}"#),
                        wire(#"{"z":"inc","w":{"laptop":[18446744073709551615]}}"#), wire(#"{"z":"inc","w":{"laptop":[1,18446744073709551615]}}"#),
                        ZoneChangeToken(rawValue: "f1." + String(repeating: "A", count: FolderChangeToken.maximumTextBytes))] {
            #expect(throws: ZoneError.self) { try FolderChangeToken(parsing: hostile, incarnation: "inc") }
        }
        #expect(try FolderChangeToken(parsing: wire(#"{"z":"inc","w":{}}"#), incarnation: "inc").writers.isEmpty)
    }
}
