import Foundation
@testable import ImprintZones
import ImprintTestSupport
import Testing

/// One behavioural suite for every ZoneStore (the guarantees in ZoneStore.swift's doc).
@Suite("Zone store conformance")
struct ZoneStoreConformanceTests {
    static let zone = "doc_0f3a9c"

    func draft(_ name: String, _ asset: ZoneAsset, type: String = "change", seq: Int64? = nil) -> ZoneRecordDraft {
        ZoneRecordDraft(recordName: name, recordType: type, fields: ZoneRecordFields(convoId: "0f3a9c", epoch: 1, seq: seq), asset: .uploaded(asset))
    }

    @Test(arguments: ZoneStoreKind.all)
    func zonesAreCreatedOnceAndDeleted(_ kind: ZoneStoreKind) async throws {
        try await withZoneStore(kind) { store in
            let info = try await store.createZone(Self.zone, convoId: "0f3a9c")
            #expect(info.zoneId == Self.zone)
            #expect(info.kind == "shared")
            await expectZoneError(.zoneExists) { try await store.createZone(Self.zone) }
            await expectZoneError(.zoneNotFound) { try await store.fetchChanges(zoneId: "doc_other", since: nil) }
            await expectZoneError(.zoneNotFound) { try await store.deleteZone("doc_other") }
            try await store.deleteZone(Self.zone)
            await expectZoneError(.zoneNotFound) { try await store.fetchChanges(zoneId: Self.zone, since: nil) }
            _ = try await store.createZone(Self.zone) // again after deletion, empty
            #expect(try await store.fetchChanges(zoneId: Self.zone, since: nil).records.isEmpty)
        }
    }

    @Test(arguments: ZoneStoreKind.all)
    func assetsAreContentAddressedAndChecked(_ kind: ZoneStoreKind) async throws {
        try await withZoneStore(kind) { store in
            _ = try await store.createZone(Self.zone)
            let bytes = Array("ciphertext".utf8)
            let asset = try await store.uploadAsset(zoneId: Self.zone, bytes: bytes)
            #expect(asset == ZoneAsset(of: bytes))
            #expect(try await store.uploadAsset(zoneId: Self.zone, bytes: bytes) == asset)
            #expect(try await store.fetchAsset(zoneId: Self.zone, hash: asset.hash) == bytes)
            let empty = try await store.uploadAsset(zoneId: Self.zone, bytes: [])
            #expect(try await store.fetchAsset(zoneId: Self.zone, hash: empty.hash) == [])
            await expectZoneError(.assetNotFound) { try await store.fetchAsset(zoneId: Self.zone, hash: String(repeating: "ab", count: 32)) }
            await expectZoneError(.invalidArgument) { try await store.fetchAsset(zoneId: Self.zone, hash: "../../etc/passwd") }
            // A record may only reference an uploaded asset.
            await expectZoneError(.assetNotFound) {
                try await store.saveRecords(zoneId: Self.zone, [draft("r", ZoneAsset(hash: String(repeating: "cd", count: 32), size: 3))])
            }
        }
    }

    @Test(arguments: ZoneStoreKind.all)
    func savesAreAtomicAndIdempotent(_ kind: ZoneStoreKind) async throws {
        try await withZoneStore(kind) { store in
            _ = try await store.createZone(Self.zone)
            let a = try await store.uploadAsset(zoneId: Self.zone, bytes: [1, 2, 3])
            let b = try await store.uploadAsset(zoneId: Self.zone, bytes: [4, 5, 6])
            let first = try await store.saveRecords(zoneId: Self.zone, [draft("r1", a, seq: 1), draft("r2", b, seq: 2)])
            #expect(first.map(\.recordName) == ["r1", "r2"])
            #expect(first[0].fields.seq == 1 && first[0].asset == a && !first[0].deleted)
            // A retry (same names, same hashes) returns the stored records and changes nothing.
            let retry = try await store.saveRecords(zoneId: Self.zone, [draft("r1", a, seq: 1), draft("r2", b, seq: 2)])
            #expect(retry == first)
            // Same name, other hash: RecordExists, and nothing of the batch is saved.
            let error = await expectZoneError(.recordExists) {
                try await store.saveRecords(zoneId: Self.zone, [draft("r3", a), draft("r1", b)])
            }
            if kind != .httpLoopback { #expect(error?.recordName == "r1") } // the API's error body names no record
            await expectZoneError(.recordNotFound) { try await store.record(zoneId: Self.zone, named: "r3") }
            let feed = try await drainChanges(store, Self.zone)
            #expect(Set(feed.records.map(\.recordName)) == ["r1", "r2"])
            #expect(try await store.record(zoneId: Self.zone, named: "r2") == first[1])
            // Inline assets are stored as if uploaded.
            let inline = try await store.saveRecords(zoneId: Self.zone, [ZoneRecordDraft(recordName: "small", recordType: "comment", asset: .inline([9, 9]))])
            #expect(try await store.fetchAsset(zoneId: Self.zone, hash: inline[0].asset.hash) == [9, 9])
            // Bad batches are refused whole.
            await expectZoneError(.invalidArgument) { try await store.saveRecords(zoneId: Self.zone, []) }
            await expectZoneError(.invalidArgument) { try await store.saveRecords(zoneId: Self.zone, [draft("x", a), draft("x", a)]) }
            await expectZoneError(.invalidArgument) { try await store.saveRecords(zoneId: Self.zone, [draft("bad\nname", a)]) }
            await expectZoneError(.invalidArgument) { try await store.saveRecords(zoneId: Self.zone, [draft("t", a, type: "no spaces")]) }
        }
    }

    @Test(arguments: ZoneStoreKind.all)
    func feedPagesThroughEveryChangeWithTombstones(_ kind: ZoneStoreKind) async throws {
        try await withZoneStore(kind) { store in
            _ = try await store.createZone(Self.zone)
            let seed = testSeed("feedPagesThroughEveryChange", fallback: 0x5eed_0001)
            var rng = SplitMix64(seed: seed)
            var expected: [String: ZoneAsset] = [:]
            for batch in 0..<12 {
                var drafts: [ZoneRecordDraft] = []
                for index in 0..<Int(rng.next() % 5 + 1) {
                    let asset = try await store.uploadAsset(zoneId: Self.zone, bytes: Array("b\(batch)-\(index)-\(rng.next())".utf8))
                    drafts.append(draft("rec-\(batch)-\(index)", asset))
                    expected["rec-\(batch)-\(index)"] = asset
                }
                _ = try await store.saveRecords(zoneId: Self.zone, drafts)
            }
            let all = try await drainChanges(store, Self.zone, limit: 3)
            #expect(all.pages > 1)
            #expect(latest(all.records).mapValues(\.asset) == expected)
            // Nothing new: the token stays good and the page is empty.
            let quiet = try await store.fetchChanges(zoneId: Self.zone, since: all.token)
            #expect(quiet.records.isEmpty && !quiet.moreComing)
            // A delete comes as a tombstone; a second delete of the name is a no-op.
            #expect(try await store.deleteRecords(zoneId: Self.zone, names: ["rec-0-0", "missing"]) == ["rec-0-0"])
            #expect(try await store.deleteRecords(zoneId: Self.zone, names: ["rec-0-0"]) == [])
            let after = try await drainChanges(store, Self.zone, since: all.token)
            #expect(after.records.map(\.recordName) == ["rec-0-0"])
            #expect(after.records.first?.deleted == true)
            await expectZoneError(.recordNotFound) { try await store.record(zoneId: Self.zone, named: "rec-0-0") }
            // A deleted name may be saved again, with another asset.
            let again = try await store.uploadAsset(zoneId: Self.zone, bytes: [7])
            _ = try await store.saveRecords(zoneId: Self.zone, [draft("rec-0-0", again)])
            let revived = try await drainChanges(store, Self.zone, since: after.token)
            #expect(revived.records.map(\.recordName) == ["rec-0-0"] && revived.records.first?.deleted == false)
            // From the start, the feed shows each record's current state.
            let fresh = latest(try await drainChanges(store, Self.zone).records)
            #expect(fresh["rec-0-0"]?.asset == again && fresh.count == expected.count)
            await expectZoneError(.invalidArgument) { try await store.fetchChanges(zoneId: Self.zone, since: nil, limit: 0) }
            await expectZoneError(.invalidArgument) { try await store.fetchChanges(zoneId: Self.zone, since: nil, limit: 1001) }
        }
    }

    /// A reader paging while writers save never misses a record: whatever it has not seen
    /// when it stops is in the next fetch from its token.
    @Test(arguments: ZoneStoreKind.all)
    func concurrentSavesAreNeverSkipped(_ kind: ZoneStoreKind) async throws {
        try await withZoneStore(kind) { store in
            _ = try await store.createZone(Self.zone)
            let asset = try await store.uploadAsset(zoneId: Self.zone, bytes: [42])
            var seen = Set<String>()
            var token: ZoneChangeToken?
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<3 {
                    group.addTask {
                        for index in 0..<15 {
                            _ = try await store.saveRecords(zoneId: Self.zone, [self.draft("w\(writer)-\(index)", asset)])
                        }
                    }
                }
                for _ in 0..<10 {
                    let page = try await store.fetchChanges(zoneId: Self.zone, since: token, limit: 4)
                    seen.formUnion(page.records.map(\.recordName))
                    token = page.changeToken
                }
                try await group.waitForAll()
            }
            let rest = try await drainChanges(store, Self.zone, since: token, limit: 4)
            seen.formUnion(rest.records.map(\.recordName))
            #expect(seen == Set((0..<3).flatMap { writer in (0..<15).map { "w\(writer)-\($0)" } }))
        }
    }

    @Test(arguments: ZoneStoreKind.all)
    func unknownTokensAreExpired(_ kind: ZoneStoreKind) async throws {
        try await withZoneStore(kind) { store in
            _ = try await store.createZone(Self.zone)
            _ = try await store.createZone("doc_other")
            let asset = try await store.uploadAsset(zoneId: Self.zone, bytes: [1])
            _ = try await store.saveRecords(zoneId: Self.zone, [draft("r", asset)])
            let token = try await store.fetchChanges(zoneId: Self.zone, since: nil).changeToken
            for hostile in ["", "garbage", "m1.x.999999", "f1.%%%", "f1.e30=", String(repeating: "A", count: 5000), token.rawValue + "0"] {
                await expectZoneError(.changeTokenExpired) { try await store.fetchChanges(zoneId: Self.zone, since: ZoneChangeToken(rawValue: hostile)) }
            }
            // Another zone's token, and a token from before the zone was deleted and re-created.
            await expectZoneError(.changeTokenExpired) { try await store.fetchChanges(zoneId: "doc_other", since: token) }
            try await store.deleteZone(Self.zone)
            _ = try await store.createZone(Self.zone)
            await expectZoneError(.changeTokenExpired) { try await store.fetchChanges(zoneId: Self.zone, since: token) }
            #expect(try await store.fetchChanges(zoneId: Self.zone, since: nil).records.isEmpty)
        }
    }

    @Test(arguments: ZoneStoreKind.all)
    func subscriptionNotifiesChanges(_ kind: ZoneStoreKind) async throws {
        try await withZoneStore(kind) { store in
            _ = try await store.createZone(Self.zone)
            await expectZoneError(.zoneNotFound) { try await store.subscribe(zoneId: "doc_other") }
            let notifications = try await store.subscribe(zoneId: Self.zone)
            let asset = try await store.uploadAsset(zoneId: Self.zone, bytes: [1])
            _ = try await store.saveRecords(zoneId: Self.zone, [draft("r", asset)])
            var iterator = notifications.makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first?.zoneId == Self.zone)
            // The notification leads to the change.
            #expect(try await store.fetchChanges(zoneId: Self.zone, since: nil).records.map(\.recordName) == ["r"])
        }
    }

    @Test(arguments: ZoneStoreKind.all)
    func namesAndLimitsAreChecked(_ kind: ZoneStoreKind) async throws {
        try await withZoneStore(kind) { store in
            await expectZoneError(.invalidArgument) { try await store.createZone("") }
            await expectZoneError(.invalidArgument) { try await store.createZone(String(repeating: "z", count: ZoneLimits.zoneIdBytes + 1)) }
            await expectZoneError(.invalidArgument) { try await store.createZone("doc_\u{0}") }
            // Ids any DID can make, with characters a file system would not like, are fine.
            for zoneId in ["inbox_did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", "share_../../x", "doc_A", "doc_a", "Doc_ünï"] {
                _ = try await store.createZone(zoneId)
                let asset = try await store.uploadAsset(zoneId: zoneId, bytes: Array(zoneId.utf8))
                _ = try await store.saveRecords(zoneId: zoneId, [draft("r", asset)])
            }
            // "doc_A" and "doc_a" are different zones.
            let upper = try await store.record(zoneId: "doc_A", named: "r")
            let lower = try await store.record(zoneId: "doc_a", named: "r")
            #expect(upper.asset != lower.asset)
            await expectZoneError(.payloadTooLarge) {
                try await store.uploadAsset(zoneId: "doc_a", bytes: [UInt8](repeating: 0, count: ZoneLimits.maximumAssetBytes + 1))
            }
        }
    }
}
