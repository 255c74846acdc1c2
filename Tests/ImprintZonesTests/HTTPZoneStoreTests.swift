import Foundation
import NIOCore
import ImprintDelivery
@testable import ImprintZones
import ImprintTestSupport
import Testing

/// `HTTPZoneStore` on the wire: what it sends (paths, signed lxm, query, JSON, base64) and
/// what it does with answers a broken or hostile server gives (typed errors, bounded memory).
@Suite("HTTP zone store")
struct HTTPZoneStoreTests {
    static let zone = "doc_5e1d"

    func withServer(_ body: (LoopbackZoneServer, HTTPZoneStore) async throws -> Void) async throws {
        let server = try await LoopbackZoneServer.start()
        do {
            try await body(server, server.store())
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }
    }

    @Test func requestsFollowTheContract() async throws {
        try await withServer { server, store in
            _ = try await store.createZone(Self.zone, convoId: "5e1d")
            let asset = try await store.uploadAsset(zoneId: Self.zone, bytes: [0, 255, 1])
            _ = try await store.saveRecords(zoneId: Self.zone, [
                ZoneRecordDraft(recordName: "r1", recordType: "commit", fields: ZoneRecordFields(convoId: "5e1d", epoch: 4, seq: 12), asset: .uploaded(asset)),
                ZoneRecordDraft(recordName: "r2", recordType: "comment", asset: .inline([1, 2, 3])),
            ])
            let page = try await store.fetchChanges(zoneId: Self.zone, since: nil, limit: 7)
            _ = try await store.fetchChanges(zoneId: Self.zone, since: page.changeToken, limit: 7)
            _ = try await store.deleteRecords(zoneId: Self.zone, names: ["r1"])
            let seen = await server.script.requests()
            #expect(seen.map(\.method) == ["createZone", "uploadAsset", "saveRecords", "fetchChanges", "fetchChanges", "deleteRecords"])
            #expect(seen.allSatisfy { $0.lxm == "app.imprint.zone." + $0.method })
            #expect(try JSONDecoder().decode(ZoneWire.CreateZoneInput.self, from: Data(seen[0].body)) == .init(zoneId: Self.zone, convoId: "5e1d"))
            #expect(seen[1].body == [0, 255, 1] && seen[1].query.removingPercentEncoding == "zoneId=\(Self.zone)")
            let save = try #require(try JSONSerialization.jsonObject(with: Data(seen[2].body)) as? [String: Any])
            let records = try #require(save["records"] as? [[String: Any]])
            #expect((records[0]["asset"] as? [String: Any])?["hash"] as? String == asset.hash)
            #expect((records[0]["fields"] as? [String: Any])?["seq"] as? Int == 12)
            #expect(records[1]["assetData"] as? String == "AQID" && records[1]["asset"] == nil)
            #expect(seen[3].query.removingPercentEncoding == "zoneId=\(Self.zone)&limit=7")
            #expect(seen[4].query.removingPercentEncoding?.hasPrefix("zoneId=\(Self.zone)&limit=7&since=") == true)
            #expect(try JSONDecoder().decode(ZoneWire.DeleteRecordsInput.self, from: Data(seen[5].body)) == .init(zoneId: Self.zone, recordNames: ["r1"]))
        }
    }

    /// A server before zone API v1.3 refuses the fan-out's records sent once beside the inboxes
    /// (400): the client sends that part again inbox by inbox (v1.1), and every later fan-out
    /// to that server in the old shape only. A request refused in the old shape too is an
    /// error, and the server is not taken for an old one.
    @Test func aFanOutFallsBackToTheOldWireForAnOlderServer() async throws {
        try await withServer { server, store in
            let inboxes = (1...3).map { "inbox_did:key:z6Mk\($0)" }
            for inbox in inboxes { _ = try await store.createZone(inbox, convoId: nil) }
            func copies(_ n: Int, to zones: [String]) -> [InboxSave] {
                let draft = ZoneRecordDraft(recordName: "m-\(n).0", recordType: "change", fields: ZoneRecordFields(seq: Int64(n)),
                                            asset: .inline(Array("copy \(n)".utf8)))
                return zones.map { InboxSave(zoneId: $0, records: [draft]) }
            }
            func fanOutBodies() async -> [ZoneWire.SaveToInboxesInput] {
                await server.script.requests().filter { $0.method == "saveToInboxes" }.compactMap {
                    try? JSONDecoder().decode(ZoneWire.SaveToInboxesInput.self, from: Data($0.body))
                }
            }
            let first = try await store.saveToInboxes(copies(1, to: inboxes))
            #expect(first.map(\.zoneId) == inboxes && first.allSatisfy { $0.error == nil && $0.records.map(\.recordName) == ["m-1.0"] })
            var bodies = await fanOutBodies()
            #expect(bodies.count == 2)
            #expect(bodies.first?.records?.count == 1 && bodies.first?.inboxes.allSatisfy { $0.records == nil } == true, "v1.3 first")
            #expect(bodies.last?.records == nil && bodies.last?.inboxes.allSatisfy { $0.records?.count == 1 } == true, "then v1.1")
            for inbox in inboxes {
                #expect(try await server.backing.fetchChanges(zoneId: inbox, since: nil).records.map(\.recordName) == ["m-1.0"])
            }
            // From now on this server gets the old shape at once.
            _ = try await store.saveToInboxes(copies(2, to: inboxes))
            bodies = await fanOutBodies()
            #expect(bodies.count == 3 && bodies.last?.records == nil)
            #expect(LegacyFanOut.servers.contains(server.baseURL))

            // A fresh server, and a request that is bad in either shape.
            let other = try await LoopbackZoneServer.start()
            defer { Task { await other.stop() } }
            let otherStore = other.store()
            await other.script.answer("saveToInboxes", status: .badRequest, body: Array(#"{"error":"InvalidRequest","message":"no"}"#.utf8))
            await #expect(throws: ZoneError.self) { try await otherStore.saveToInboxes(copies(3, to: inboxes)) }
            #expect(await other.script.requests().filter { $0.method == "saveToInboxes" }.count == 2)
            #expect(!LegacyFanOut.servers.contains(other.baseURL))
        }
    }

    /// A fan-out past one request's 400 records goes as several requests, sent concurrently,
    /// and its results still come in the order of the saves (here 900 inboxes, each with a
    /// record of its own: three requests of up to 400 inboxes).
    @Test func aFanOutOfSeveralRequestsAnswersInTheOrderOfItsSaves() async throws {
        try await withServer { server, store in
            let inboxes = (1...900).map { "inbox_did:key:z6Mk\($0)" }
            for inbox in inboxes { _ = try await server.backing.createZone(inbox, convoId: nil) }
            let saves = inboxes.enumerated().map { index, inbox in
                InboxSave(zoneId: inbox, records: [ZoneRecordDraft(recordName: "m-\(index).0", recordType: "change",
                                                                   fields: ZoneRecordFields(seq: Int64(index)), asset: .inline(Array("copy \(index)".utf8)))])
            }
            let results = try await store.saveToInboxes(saves)
            #expect(results.map(\.zoneId) == inboxes)
            #expect(results.enumerated().allSatisfy { index, result in result.error == nil && result.records.map(\.recordName) == ["m-\(index).0"] })
            // Three requests of up to 400 inboxes, 900 in all.
            let saved = await server.script.requests().filter { $0.method == "saveToInboxes" }.compactMap {
                try? JSONDecoder().decode(ZoneWire.SaveToInboxesInput.self, from: Data($0.body))
            }.filter { $0.records == nil }
            #expect(saved.map(\.inboxes.count).sorted() == [100, 400, 400])
            for index in [0, 399, 400, 899] {
                #expect(try await server.backing.fetchChanges(zoneId: inboxes[index], since: nil).records.map(\.recordName) == ["m-\(index).0"])
            }
        }
    }

    @Test func usageIsReadAndChecked() async throws {
        try await withServer { server, store in
            await server.script.answer("getUsage", body: Array(#"{"zones":[{"zoneId":"doc_1","records":3,"bytes":4096}],"quotaBytes":21474836480}"#.utf8))
            let usage = try await store.usage()
            #expect(usage.quotaBytes == 20 << 30 && usage.zones.map(\.zoneId) == ["doc_1"] && usage.zones.first?.bytes == 4096)
            #expect(await server.script.requests().last?.lxm == "app.imprint.zone.getUsage")
            for hostile in [#"{"zones":[{"zoneId":"z","records":-1,"bytes":0}],"quotaBytes":1}"#, #"{"zones":[],"quotaBytes":-1}"#, #"{"zones":{}}"#] {
                await server.script.answer("getUsage", body: Array(hostile.utf8))
                await expectZoneError(.invalidResponse) { try await store.usage() }
            }
        }
    }

    @Test func serviceErrorsMapToCodes() async throws {
        try await withServer { server, store in
            let cases: [(Int, String, ZoneError.Code)] = [
                (404, "ZoneNotFound", .zoneNotFound), (404, "RecordNotFound", .recordNotFound), (404, "AssetNotFound", .assetNotFound),
                (409, "RecordExists", .recordExists), (409, "ZoneExists", .zoneExists), (410, "ChangeTokenExpired", .changeTokenExpired),
                (413, "PayloadTooLarge", .payloadTooLarge), (403, "QuotaExceeded", .quotaExceeded), (403, "NotMember", .forbidden),
                (401, "AuthRequired", .forbidden), (410, "Gone", .gone), (400, "InvalidRequest", .invalidArgument), (500, "Whatever", .server),
            ]
            for (status, name, code) in cases {
                let body = Array(#"{"error":"\#(name)","message":"m"}"#.utf8)
                await server.script.answer("fetchChanges", status: .init(code: status), body: body)
                let error = await expectZoneError(code) { try await store.fetchChanges(zoneId: Self.zone, since: nil) }
                #expect(error?.httpStatus == status)
            }
            await server.script.answer("fetchChanges", status: .badGateway, contentType: "text/html", body: Array("<html>".utf8))
            await expectZoneError(.server) { try await store.fetchChanges(zoneId: Self.zone, since: nil) }
        }
    }

    @Test func hostileAnswersAreTypedErrors() async throws {
        let seed = testSeed("hostileHTTPAnswers", fallback: 0x4e57_1e)
        var rng = SplitMix64(seed: seed)
        try await withServer { server, store in
            let hash = String(repeating: "a", count: 64)
            let good = #"{"recordName":"r","recordType":"change","fields":{},"asset":{"hash":"\#(hash)","size":1},"changeToken":"1","savedAt":"2026-11-23T10:00:00.000Z","deleted":false}"#
            let hostile = [
                "", "null", "[]", "{", #"{"records":[]}"#, #"{"records":"x","changeToken":"t","moreComing":false}"#,
                #"{"records":[],"changeToken":"","moreComing":false}"#,
                #"{"records":[\#(good.replacingOccurrences(of: "\"size\":1", with: "\"size\":-5"))],"changeToken":"t","moreComing":false}"#,
                #"{"records":[\#(good.replacingOccurrences(of: hash, with: "../x"))],"changeToken":"t","moreComing":false}"#,
                #"{"records":[\#(good.replacingOccurrences(of: "2026-11-23T10:00:00.000Z", with: "yesterday"))],"changeToken":"t","moreComing":false}"#,
                #"{"records":[\#(good.replacingOccurrences(of: "\"recordName\":\"r\"", with: "\"recordName\":\"\""))],"changeToken":"t","moreComing":false}"#,
                #"{"records":[\#(good.replacingOccurrences(of: "\"fields\":{}", with: "\"fields\":{\"chunkIndex\":3,\"chunkCount\":1}"))],"changeToken":"t","moreComing":false}"#,
                #"{"records":[\#(good.replacingOccurrences(of: "\"fields\":{}", with: "\"fields\":{\"epoch\":1e400}"))],"changeToken":"t","moreComing":false}"#,
                #"{"records":[\#(Array(repeating: good, count: 1001).joined(separator: ","))],"changeToken":"t","moreComing":false}"#,
            ]
            var bodies = hostile.map { Array($0.utf8) }
            for _ in 0..<30 { bodies.append((0..<Int(rng.next() % 200)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }) }
            for body in bodies {
                await server.script.answer("fetchChanges", body: body)
                await expectZoneError(.invalidResponse) { try await store.fetchChanges(zoneId: Self.zone, since: nil) }
            }
            // Larger than any answer may be: refused without reading it all.
            await server.script.answer("fetchChanges", body: [UInt8](repeating: 0x20, count: HTTPZoneStore.maximumJSONResponseBytes + 1))
            await expectZoneError(.invalidResponse) { try await store.fetchChanges(zoneId: Self.zone, since: nil) }
            // A record answer for another name, a save answer for other records, an upload answer with another hash.
            await server.script.answer("getRecord", body: Array(#"{"record":\#(good.replacingOccurrences(of: "\"recordName\":\"r\"", with: "\"recordName\":\"q\""))}"#.utf8))
            await expectZoneError(.invalidResponse) { try await store.record(zoneId: Self.zone, named: "r") }
            await server.script.answer("saveRecords", body: Array(#"{"records":[]}"#.utf8))
            await expectZoneError(.invalidResponse) {
                try await store.saveRecords(zoneId: Self.zone, [ZoneRecordDraft(recordName: "r", recordType: "change", asset: .inline([1]))])
            }
            await server.script.answer("uploadAsset", body: Array(#"{"hash":"\#(hash)","size":1}"#.utf8))
            await expectZoneError(.invalidResponse) { try await store.uploadAsset(zoneId: Self.zone, bytes: [1]) }
            await server.script.answer("deleteRecords", body: Array(#"{"deleted":["not-asked"]}"#.utf8))
            await expectZoneError(.invalidResponse) { try await store.deleteRecords(zoneId: Self.zone, names: ["r"]) }
            await server.script.answer("createZone", body: Array(#"{"zone":{"zoneId":"doc_other","kind":"shared","createdAt":"2026-11-23T10:00:00Z"}}"#.utf8))
            await expectZoneError(.invalidResponse) { try await store.createZone(Self.zone) }
            // Asset bytes that do not hash to the name asked for.
            await server.script.answer("getAsset", contentType: "application/octet-stream", body: [1, 2, 3])
            await expectZoneError(.assetCorrupt) { try await store.fetchAsset(zoneId: Self.zone, hash: hash) }
        }
    }

    @Test func hostileEventStreamsEndWithTypedErrors() async throws {
        try await withServer { server, store in
            _ = try await store.createZone(Self.zone)
            for body in ["event: changed\ndata: not json\n\n", "event: changed\ndata: {\"zoneId\":\"doc_other\",\"changeToken\":\"t\"}\n\n",
                         String(repeating: "x", count: HTTPZoneStore.maximumPendingEventBytes + 10)] {
                await server.script.answer("subscribeZone", contentType: "text/event-stream", body: Array(body.utf8))
                let stream = try await store.subscribe(zoneId: Self.zone)
                await expectZoneError(.invalidResponse) {
                    for try await _ in stream {}
                }
            }
            // Comments, other events and a well-formed one.
            await server.script.answer("subscribeZone", contentType: "text/event-stream",
                                       body: Array(": hi\n\nevent: other\ndata: x\n\nid: 1\nevent: changed\ndata: {\"zoneId\":\"\(Self.zone)\",\"changeToken\":\"t9\"}\n\n".utf8))
            var received: [ZoneChangeNotification] = []
            for try await notification in try await store.subscribe(zoneId: Self.zone) { received.append(notification) }
            #expect(received == [ZoneChangeNotification(zoneId: Self.zone, changeToken: ZoneChangeToken(rawValue: "t9"))])
        }
    }

    @Test func unreachableServiceIsATransportError() async throws {
        // Port 1 on loopback: nothing listens there, so the connection is refused.
        var store = HTTPZoneStore(baseURL: "http://127.0.0.1:1", serviceDID: LoopbackZoneServer.serviceDID, signer: ServiceAuthSigner())
        store.timeout = .seconds(1) // async-http-client retries refused connections until the deadline
        await expectZoneError(.transport) { try await store.fetchChanges(zoneId: Self.zone, since: nil) }
    }
}
