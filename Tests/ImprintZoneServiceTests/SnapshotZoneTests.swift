import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import ImprintZoneService
import Testing

/// Reviewer-snapshot zones: capability reads and comment appends without a token.
@Suite struct SnapshotZoneTests {
    static let readCapability = "0123456789abcdef0123456789abcdef"
    static let commentCapability = "comment-secret-from-the-link"

    @Test(arguments: StoreKind.available)
    func capabilitiesReadSnapshotsAndAppendComments(_ kind: StoreKind) async throws {
        try await withZoneServer(kind, configure: { $0.commentBurst = 2; $0.commentRate = 0.001 }) { server in
            let owner = server.client()
            let zoneId = "share_review1"
            try await owner.createZone(zoneId)
            let snapshotBytes = testBytes(5000, seed: 11)
            let asset = try await owner.upload(snapshotBytes, zoneId: zoneId)
            try await owner.save(zoneId, [RecordToSave(
                recordName: Self.readCapability, recordType: "snapshot",
                fields: ["commentKeyHash": .string(sha256Hex(Data(Self.commentCapability.utf8)))], asset: asset)])

            let anonymous = server.client()
            let record = try anonymous.decode(GetRecordOutput.self, try await anonymous.call(
                .getRecord, query: [("zoneId", zoneId), ("recordName", Self.readCapability)], authenticated: false)).record
            #expect(record.asset == asset)
            let bytes = try await anonymous.call(
                .getAsset, query: [("zoneId", zoneId), ("hash", asset.hash), ("recordName", Self.readCapability)], authenticated: false)
            #expect(bytes.status == 200 && bytes.body == snapshotBytes)
            // Without the capability name: nothing; another stranger with a token: not the owner.
            #expect(try await anonymous.call(.getRecord, query: [("zoneId", zoneId), ("recordName", "guess")], authenticated: false).status == 404)
            #expect(try await anonymous.call(.fetchChanges, query: [("zoneId", zoneId)], authenticated: false).status == 401)
            await expectServiceError(403, "Forbidden") { try await anonymous.fetch(zoneId) }

            func comment(_ name: String, capability: String = Self.commentCapability, bytes: Int = 100) async throws -> RawResponse {
                try await anonymous.call(.saveRecords, json: try WireJSON.encoder().encode(SaveRecordsInput(
                    zoneId: zoneId, records: [RecordToSave(recordName: name, recordType: "comment", assetData: testBytes(bytes, seed: 5))],
                    snapshotName: Self.readCapability, commentCapability: capability)), authenticated: false)
            }
            #expect(try await comment("c1").status == 200)
            #expect(try await comment("c2", capability: "wrong").errorName == "Forbidden")
            #expect(try await comment("c3", bytes: 20_000).errorName == "Forbidden")  // over the comment cap
            // Wrong capabilities count against the per-zone rate (no guessing at speed): the burst of 2 is used up.
            #expect(try await comment("c4").errorName == "RateLimited")
            #expect(try await owner.fetch(zoneId).records.map(\.recordName) == [Self.readCapability, "c1"])

            // Deleted: 410 Gone for capability holders.
            #expect(try await owner.delete(zoneId, [Self.readCapability]) == [Self.readCapability])
            #expect(try await anonymous.call(
                .getRecord, query: [("zoneId", zoneId), ("recordName", Self.readCapability)], authenticated: false).errorName == "Gone")
        }
    }

    @Test(arguments: StoreKind.available)
    func expiredSnapshotsAreGone(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let owner = server.client()
            try await owner.createZone("share_old")
            try await owner.save("share_old", [RecordToSave(
                recordName: Self.readCapability, recordType: "snapshot", fields: ["expiresAt": .string("2020-01-01T00:00:00Z")],
                assetData: Data([1]))])
            let response = try await owner.call(
                .getRecord, query: [("zoneId", "share_old"), ("recordName", Self.readCapability)], authenticated: false)
            #expect(response.status == 410 && response.errorName == "Gone")
        }
    }
}
