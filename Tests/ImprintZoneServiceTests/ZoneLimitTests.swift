import Foundation
import ImprintDelivery
import ImprintServerTestSupport
import ImprintZoneService
import Testing

/// The contract's limits, and hostile input answered with 4xx, never 5xx.
@Suite struct ZoneLimitTests {
    @Test(arguments: StoreKind.available)
    func sizeLimitsHold(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let owner = server.client()
            let zoneId = "share_limits"
            try await owner.createZone(zoneId)
            await expectServiceError(413, "PayloadTooLarge") {
                try await owner.save(zoneId, [RecordToSave(recordName: "big", recordType: "x", assetData: testBytes((48 << 10) + 1, seed: 1))])
            }
            try await owner.save(zoneId, [RecordToSave(recordName: "ok", recordType: "x", assetData: testBytes(48 << 10, seed: 1))])
            await expectServiceError(413, "PayloadTooLarge") { try await owner.upload(testBytes((1 << 20) + 1, seed: 2), zoneId: zoneId) }
            let attachment = try await owner.upload(testBytes(3 << 20, seed: 3), zoneId: zoneId, recordType: "attachment")
            #expect(attachment.size == 3 << 20)
            // An attachment-sized asset on a plain record is refused; on an attachment record it is fine.
            await expectServiceError(400, "InvalidRequest") {
                try await owner.save(zoneId, [RecordToSave(recordName: "att", recordType: "change", asset: attachment)])
            }
            try await owner.save(zoneId, [RecordToSave(recordName: "att", recordType: "attachment", asset: attachment)])
            let body = try await owner.call(.saveRecords, json: Data(repeating: 0x20, count: (2 << 20) + 1))
            #expect(body.status == 413)
        }
    }

    @Test(arguments: StoreKind.available)
    func hostileInputIsNever5xx(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let owner = server.client()
            try await owner.createZone("share_hostile")
            let bodies: [(ZoneMethod, String)] = [
                (.createZone, "{}"), (.createZone, #"{"zoneId": "nope"}"#), (.createZone, #"{"zoneId": "doc_"}"#),
                (.createZone, #"{"zoneId": "share_a\u0000b"}"#), (.createZone, "[1,2"), (.createZone, #"{"zoneId": 5}"#),
                (.saveRecords, #"{"zoneId": "share_hostile", "records": []}"#),
                (.saveRecords, #"{"zoneId": "share_hostile", "records": [{"recordName": "../x", "recordType": "a"}]}"#),
                (.saveRecords, #"{"zoneId": "share_hostile", "records": [{"recordName": "..", "recordType": "a", "assetData": "AA=="}]}"#),
                (.saveRecords, #"{"zoneId": "share_hostile", "records": [{"recordName": ".hidden", "recordType": "a", "assetData": "AA=="}]}"#),
                (.saveRecords, #"{"zoneId": "share_hostile", "records": [{"recordName": "~root", "recordType": "a", "assetData": "AA=="}]}"#),
                (.saveRecords, #"{"zoneId": "share_hostile", "records": [{"recordName": "a", "recordName": "b", "recordType": "a", "assetData": "AA=="}]}"#),
                (.saveRecords, #"{"zoneId": "share_hostile", "records": [{"recordName": "a", "recordType": "a", "assetData": "***"}]}"#),
                (.saveRecords, #"{"zoneId": "share_hostile", "records": [{"recordName": "a", "recordType": "a", "fields": {"seq": -1}}]}"#),
                (.saveRecords, #"{"zoneId": "share_hostile", "records": [{"recordName": "a", "recordType": "a", "fields": {"seq": 1e300}}]}"#),
                (.saveRecords, #"{"zoneId": "share_hostile", "records": [{"recordName": "a", "recordType": "a", "asset": {"hash": "zz", "size": 1}}]}"#),
                (.saveRecords, #"{"zoneId": "share_hostile", "records": [{"recordName": "a", "recordType": "a"}, {"recordName": "a", "recordType": "a"}]}"#),
                (.deleteRecords, #"{"zoneId": "share_hostile", "recordNames": []}"#),
                (.deleteZone, #"{"zoneId": "inbox_did:key:"}"#),
            ]
            for (method, body) in bodies {
                let response = try await owner.call(method, json: Data(body.utf8))
                #expect((400..<500).contains(response.status), "\(method) \(body): \(response.status) \(response.text)")
            }
            let queries: [(ZoneMethod, [(String, String)])] = [
                (.fetchChanges, []), (.fetchChanges, [("zoneId", "share_hostile"), ("limit", "0")]),
                (.fetchChanges, [("zoneId", "share_hostile"), ("limit", "x")]), (.fetchChanges, [("zoneId", "share_hostile"), ("bogus", "1")]),
                (.getRecord, [("zoneId", "share_hostile"), ("recordName", "")]), (.getAsset, [("zoneId", "share_hostile"), ("hash", "abc")]),
                (.subscribeZone, [("zoneId", "share_hostile"), ("cursor", "nope")]), (.uploadAsset, [("zoneId", "bad")]),
                (.getUsage, [("x", "y")]),
            ]
            for (method, query) in queries {
                let response = try await owner.call(method, query: query, raw: method == .uploadAsset ? Data([1]) : nil)
                #expect((400..<500).contains(response.status), "\(method) \(query): \(response.status) \(response.text)")
            }
            #expect(try await owner.call(.uploadAsset, query: [("zoneId", "share_hostile")], raw: Data()).status == 400)
        }
    }
}
