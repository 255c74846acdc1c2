import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import ImprintZoneService
import Testing

/// Records on every backend: save (uploaded and inline assets), idempotent retry, RecordExists,
/// getRecord, fetchChanges paging and tombstones, change tokens, getAsset with Range, usage.
@Suite struct ZoneRecordTests {
    @Test(arguments: StoreKind.available)
    func savedRecordsComeBackInChangeOrderWithTombstones(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let owner = server.client()
            let zoneId = "inbox_\(owner.did)"
            let view = try await owner.createZone(zoneId)
            #expect(view.kind == "inbox" && view.owner == owner.did)
            await expectServiceError(409, "ZoneExists") { try await owner.createZone(zoneId) }

            let big = testBytes(100_000, seed: 1)
            let uploaded = try await owner.upload(big, zoneId: zoneId)
            #expect(uploaded.size == big.count && uploaded.hash == sha256Hex(big))
            let again = try await owner.upload(big, zoneId: zoneId)
            #expect(again == uploaded)
            // With ?hash=, the server checks the bytes against it.
            let wrongHash = try await owner.call(.uploadAsset, query: [("zoneId", zoneId), ("hash", String(repeating: "c", count: 64))], raw: big)
            #expect(wrongHash.status == 400)
            #expect(try await owner.call(.uploadAsset, query: [("zoneId", zoneId), ("hash", uploaded.hash)], raw: big).status == 200)

            let first = try await owner.save(zoneId, [
                RecordToSave(recordName: "r1", recordType: "change", fields: ["epoch": .number(0), "seq": .number(1)], asset: uploaded),
                RecordToSave(recordName: "r2", recordType: "change", assetData: Data("inline".utf8)),
            ])
            #expect(first.map(\.recordName) == ["r1", "r2"])
            #expect(first[1].asset?.hash == sha256Hex(Data("inline".utf8)))
            // Same name, same asset: the retry of a save is a no-op answering the stored record.
            let retry = try await owner.save(zoneId, [RecordToSave(recordName: "r1", recordType: "change", asset: uploaded)])
            #expect(retry[0].changeToken == first[0].changeToken)
            // Same name, another asset: 409, and nothing of the batch is written.
            await expectServiceError(409, "RecordExists") {
                try await owner.save(zoneId, [
                    RecordToSave(recordName: "r3", recordType: "change", assetData: Data("x".utf8)),
                    RecordToSave(recordName: "r2", recordType: "change", assetData: Data("other".utf8)),
                ])
            }
            await expectServiceError(404, "RecordNotFound") { try await owner.record(zoneId, "r3") }
            // An asset never uploaded to this zone: 400.
            await expectServiceError(400, "InvalidRequest") {
                try await owner.save(zoneId, [RecordToSave(recordName: "r4", recordType: "change", asset: ZoneAssetRef(hash: String(repeating: "a", count: 64), size: 5))])
            }
            #expect(try await owner.record(zoneId, "r1").fields["seq"] == .number(1))

            let all = try await owner.fetch(zoneId)
            #expect(all.records.map(\.recordName) == ["r1", "r2"])
            #expect(!all.moreComing)
            #expect(try await owner.fetch(zoneId, since: all.changeToken).records.isEmpty)

            #expect(try await owner.delete(zoneId, ["r1", "nope"]) == ["r1"])
            let after = try await owner.fetch(zoneId, since: all.changeToken)
            #expect(after.records.count == 1)
            #expect(after.records[0].recordName == "r1" && after.records[0].deleted && after.records[0].asset == nil)
            await expectServiceError(404, "RecordNotFound") { try await owner.record(zoneId, "r1") }
            // The deleted record's asset is no longer readable.
            #expect(try await owner.asset(zoneId, uploaded.hash).errorName == "AssetNotFound")

            let usage = try await owner.usage()
            #expect(usage.zones == [ZoneUsage(zoneId: zoneId, records: 1, bytes: 6)])
            #expect(usage.quotaBytes == 20 << 30)
        }
    }

    @Test(arguments: StoreKind.available)
    func pagesFollowMoreComingAndTokensExpire(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let owner = server.client()
            let zoneId = "share_pages"
            try await owner.createZone(zoneId)
            for batch in 0..<5 {
                try await owner.save(zoneId, (0..<7).map { RecordToSave(recordName: "b\(batch)-\($0)", recordType: "x", assetData: Data([UInt8(batch), UInt8($0)])) })
            }
            var names: [String] = []
            var token: String?
            var pages = 0
            while true {
                let page = try await owner.fetch(zoneId, since: token, limit: 10)
                names += page.records.map(\.recordName)
                token = page.changeToken
                pages += 1
                if !page.moreComing { break }
            }
            #expect(pages == 4)
            #expect(names == (0..<5).flatMap { b in (0..<7).map { "b\(b)-\($0)" } })

            let incarnation = token!.split(separator: ".")[1]
            for bad in ["garbage", "z1.0000000000000000.1", "z1.\(incarnation).999", "", "z2.\(incarnation).3", "z2.\(incarnation).3.3",
                        "z2.\(incarnation).3.03", "z1.\(incarnation).3.9", "z2.\(incarnation).999.1000"] {
                await expectServiceError(410, "ChangeTokenExpired") { try await owner.fetch(zoneId, since: bad) }
            }
            // A deleted and recreated zone does not take its predecessor's tokens.
            try await owner.deleteZone(zoneId)
            await expectServiceError(404, "ZoneNotFound") { try await owner.fetch(zoneId) }
            try await owner.createZone(zoneId)
            await expectServiceError(410, "ChangeTokenExpired") { try await owner.fetch(zoneId, since: token) }
            #expect(try await owner.fetch(zoneId).records.isEmpty)
        }
    }

    @Test(arguments: StoreKind.available)
    func tombstonesPastRetentionArePurgedAndOlderTokensExpire(_ kind: StoreKind) async throws {
        try await withZoneServer(kind, configure: { $0.tombstoneRetentionSeconds = -3600 }) { server in
            let owner = server.client()
            let zoneId = "share_purge"
            try await owner.createZone(zoneId)
            try await owner.save(zoneId, [RecordToSave(recordName: "a", recordType: "x", assetData: Data([1]))])
            let early = try await owner.fetch(zoneId).changeToken
            try await owner.save(zoneId, [RecordToSave(recordName: "b", recordType: "x", assetData: Data([2]))])
            #expect(try await owner.delete(zoneId, ["a"]) == ["a"])
            // With a negative retention every tombstone is past it: purged at once.
            await expectServiceError(410, "ChangeTokenExpired") { try await owner.fetch(zoneId, since: early) }
            let fresh = try await owner.fetch(zoneId)
            #expect(fresh.records.map(\.recordName) == ["b"])
            // A reader that starts after the purge pages through records older than it (their
            // change numbers lie below the purge) one at a time, without a 410.
            try await owner.save(zoneId, [RecordToSave(recordName: "c", recordType: "x", assetData: Data([3]))])
            #expect(try await owner.delete(zoneId, ["c"]) == ["c"])  // purges again, past "b"
            try await owner.save(zoneId, [RecordToSave(recordName: "d", recordType: "x", assetData: Data([4]))])
            try await owner.save(zoneId, [RecordToSave(recordName: "e", recordType: "x", assetData: Data([5]))])
            var names: [String] = [], token: String?
            for _ in 0..<10 {
                let page = try await owner.fetch(zoneId, since: token, limit: 1)
                names += page.records.map(\.recordName)
                token = page.changeToken
                if !page.moreComing { break }
            }
            #expect(names == ["b", "d", "e"])
            // A token taken before a later purge still expires.
            let midway = try await owner.fetch(zoneId, limit: 1).changeToken
            #expect(try await owner.delete(zoneId, ["d"]) == ["d"])
            await expectServiceError(410, "ChangeTokenExpired") { try await owner.fetch(zoneId, since: midway) }
        }
    }

    @Test(arguments: StoreKind.available)
    func assetsServeRanges(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let owner = server.client()
            let zoneId = "share_ranges"
            try await owner.createZone(zoneId)
            let bytes = testBytes(600_000, seed: 7)  // several PostgreSQL chunks
            let asset = try await owner.upload(bytes, zoneId: zoneId)
            // Not readable until a record references it.
            #expect(try await owner.asset(zoneId, asset.hash).errorName == "AssetNotFound")
            try await owner.save(zoneId, [RecordToSave(recordName: "a", recordType: "snapshot", asset: asset)])
            let whole = try await owner.asset(zoneId, asset.hash)
            #expect(whole.status == 200 && whole.body == bytes)
            let middle = try await owner.asset(zoneId, asset.hash, range: "bytes=262140-262150")
            #expect(middle.status == 206 && middle.body == bytes[262140...262150])
            #expect(middle.headers.first(name: "Content-Range") == "bytes 262140-262150/600000")
            let tail = try await owner.asset(zoneId, asset.hash, range: "bytes=-10")
            #expect(tail.status == 206 && tail.body == bytes.suffix(10))
            let open = try await owner.asset(zoneId, asset.hash, range: "bytes=599999-")
            #expect(open.status == 206 && open.body == bytes.suffix(1))
            let outside = try await owner.asset(zoneId, asset.hash, range: "bytes=600000-")
            #expect(outside.status == 416 && outside.headers.first(name: "Content-Range") == "bytes */600000")
            let malformed = try await owner.asset(zoneId, asset.hash, range: "bytes=a-b")
            #expect(malformed.status == 200 && malformed.body.count == bytes.count)
        }
    }

    /// Inline assets (kept in the database on SQLite, since migration 1003): whole and ranged
    /// reads, one copy shared by two zones, gone with the last record that names it, and
    /// stored again by a later save of the same bytes.
    @Test(arguments: StoreKind.available)
    func inlineAssetsAreReadSharedAndCollected(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let owner = server.client()
            try await owner.createZone("share_inline_a")
            try await owner.createZone("share_inline_b")
            let bytes = testBytes(40_000, seed: 11)
            let hash = sha256Hex(bytes)
            try await owner.save("share_inline_a", [RecordToSave(recordName: "r", recordType: "change", assetData: bytes)])
            try await owner.save("share_inline_b", [RecordToSave(recordName: "r", recordType: "change", assetData: bytes)])
            for zoneId in ["share_inline_a", "share_inline_b"] {
                let whole = try await owner.asset(zoneId, hash)
                #expect(whole.status == 200 && whole.body == bytes)
            }
            let middle = try await owner.asset("share_inline_a", hash, range: "bytes=1000-1009")
            #expect(middle.status == 206 && middle.body == bytes[1000...1009])
            // One zone drops its record: the other still reads the shared bytes.
            #expect(try await owner.delete("share_inline_a", ["r"]) == ["r"])
            #expect(try await owner.asset("share_inline_a", hash).errorName == "AssetNotFound")
            #expect(try await owner.asset("share_inline_b", hash).body == bytes)
            // The last record goes, then the same bytes are saved again: stored anew, readable.
            #expect(try await owner.delete("share_inline_b", ["r"]) == ["r"])
            #expect(try await owner.asset("share_inline_b", hash).errorName == "AssetNotFound")
            try await owner.save("share_inline_a", [RecordToSave(recordName: "again", recordType: "change", assetData: bytes)])
            #expect(try await owner.asset("share_inline_a", hash).body == bytes)
        }
    }
}

func sha256Hex(_ data: Data) -> String { CommitDigest.hex(data) }
