import Crypto
import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import ImprintZoneService
import ImprintZones
import Testing

/// `HTTPZoneStore` (the client in `ImprintZones`) against the real zone service, on SQLite and
/// PostgreSQL: the two were written apart from one contract; this is where they meet. Records
/// of a shared zone are backed by real Delivery Service messages, as the service requires.
@Suite struct HTTPZoneStoreInteropTests {
    func store(_ client: ZoneTestClient, _ server: ZoneTestServer) -> HTTPZoneStore {
        HTTPZoneStore(baseURL: server.server.baseURL, serviceDID: RunningServer.serviceDID, signer: client.signer)
    }

    /// Sends an app message for `payload` as `sender`; the draft of the `change` record that carries it.
    func changeDraft(_ payload: [UInt8], name: String, fixture: SharedZoneFixture, sender: ZoneTestClient,
                     server: ZoneTestServer) async throws -> ZoneRecordDraft {
        let hash = SHA256.hash(data: payload).map { String(format: "%02x", $0) }.joined()
        let convo = try await server.delivery(sender).getConvos().convos.first { $0.id == fixture.convoId }!
        let sent = try await server.delivery(sender).sendMessage(SendMessageInput(
            convoId: fixture.convoId, epoch: convo.epoch, messageType: .app, hash: hash, size: payload.count, recordName: name))
        return ZoneRecordDraft(recordName: name, recordType: "change",
                               fields: ZoneRecordFields(convoId: fixture.convoId, epoch: Int64(convo.epoch), seq: Int64(sent.seq),
                                                        chunkIndex: 0, chunkCount: 1, payloadHash: hash),
                               asset: payload.count <= 1024 ? .inline(payload) : .uploaded(try await store(sender, server).uploadAsset(zoneId: fixture.zoneId, bytes: payload)))
    }

    @Test(arguments: StoreKind.available)
    func theClientSpeaksTheServiceContract(kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let fixture = try await SharedZoneFixture.make(on: server, members: 1)
            let owner = store(fixture.owner, server), member = store(fixture.members[0], server)
            await expectZoneError(.zoneExists) { try await owner.createZone(fixture.zoneId, convoId: fixture.convoId) }
            await expectZoneError(.zoneNotFound) { try await owner.fetchChanges(zoneId: "doc_nope", since: nil) }

            // A subscription is live when `subscribe` returns; a save by the other member wakes it.
            let notifications = try await member.subscribe(zoneId: fixture.zoneId)
            var wake = notifications.makeAsyncIterator()

            let small: [UInt8] = Array("ciphertext one".utf8)
            let large = [UInt8]((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let drafts = [try await changeDraft(small, name: "c1", fixture: fixture, sender: fixture.owner, server: server),
                          try await changeDraft(large, name: "c2", fixture: fixture, sender: fixture.owner, server: server)]
            let saved = try await owner.saveRecords(zoneId: fixture.zoneId, drafts)
            #expect(saved.map(\.recordName) == ["c1", "c2"])
            #expect(try await owner.saveRecords(zoneId: fixture.zoneId, [drafts[0]]).map(\.recordName) == ["c1"], "an idempotent retry")
            let woken = try await wake.next()
            #expect(woken?.zoneId == fixture.zoneId)

            // The member reads everything, including the asset, and pages with a token.
            let first = try await member.fetchChanges(zoneId: fixture.zoneId, since: nil, limit: 1)
            #expect(first.records.map(\.recordName) == ["c1"] && first.moreComing)
            let rest = try await member.fetchChanges(zoneId: fixture.zoneId, since: first.changeToken, limit: 10)
            #expect(rest.records.map(\.recordName) == ["c2"] && !rest.moreComing)
            #expect(try await member.fetchAsset(zoneId: fixture.zoneId, hash: rest.records[0].asset.hash) == large)
            #expect(try await member.record(zoneId: fixture.zoneId, named: "c1").fields.payloadHash == drafts[0].fields.payloadHash)
            await expectZoneError(.recordNotFound) { try await member.record(zoneId: fixture.zoneId, named: "nope") }

            // Same name, other bytes: RecordExists. A record without a DS message: refused.
            var other = drafts[0]
            other.asset = .inline(Array("different".utf8))
            await expectZoneError(.recordExists) { try await owner.saveRecords(zoneId: fixture.zoneId, [other]) }
            var unbacked = drafts[0]
            unbacked.recordName = "forged"
            unbacked.fields.seq = 999
            let refused = await expectAnyZoneError { try await member.saveRecords(zoneId: fixture.zoneId, [unbacked]) }
            #expect(refused.map { [.forbidden, .invalidArgument].contains($0.code) } == true, "\(String(describing: refused))")

            // A token the server does not know: ChangeTokenExpired, and the client starts over.
            await expectZoneError(.changeTokenExpired) {
                try await member.fetchChanges(zoneId: fixture.zoneId, since: ZoneChangeToken(rawValue: "bm90LWEtdG9rZW4"), limit: 10)
            }

            // Members delete only their own records; tombstones reach readers.
            await expectAnyZoneError { try await member.deleteRecords(zoneId: fixture.zoneId, names: ["c1"]) }
            #expect(try await owner.deleteRecords(zoneId: fixture.zoneId, names: ["c1"]) == ["c1"])
            let after = try await member.fetchChanges(zoneId: fixture.zoneId, since: rest.changeToken, limit: 10)
            #expect(after.records.map(\.recordName) == ["c1"] && after.records[0].deleted)

            // A removed member is refused at once.
            _ = try await server.delivery(fixture.owner).removeMember(RemoveMemberInput(
                convoId: fixture.convoId, epoch: 1, did: fixture.members[0].did, commit: Data("remove".utf8)))
            let removed = await expectAnyZoneError { try await member.fetchChanges(zoneId: fixture.zoneId, since: nil, limit: 10) }
            #expect(removed?.code == .forbidden, "\(String(describing: removed))")

            #expect(try await owner.usage().zones.contains { $0.zoneId == fixture.zoneId })
        }
    }

    /// One message's copies for many inboxes: the payload travels once (v1.3), each inbox gets
    /// its own outcome, and the server's body counter shows the request did not repeat it.
    @Test(arguments: StoreKind.available)
    func aFanOutSendsItsSharedPayloadOnce(kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let fixture = try await SharedZoneFixture.make(on: server, members: 20)
            let sender = store(fixture.members[0], server)
            for member in fixture.members.dropFirst() { try await member.createZone("inbox_\(member.did)") }
            let payload = [UInt8](testBytes(30_000, seed: 9))
            let draft = ZoneRecordDraft(recordName: "m-1.0", recordType: "change",
                                        fields: ZoneRecordFields(convoId: fixture.convoId, epoch: 1, seq: 1, chunkIndex: 0, chunkCount: 1,
                                                                 payloadHash: sha256Hex(Data(payload))),
                                        asset: .inline(payload))
            let missing = server.client().did
            let saves = (fixture.members.dropFirst().map(\.did) + [missing]).map { InboxSave(zoneId: "inbox_\($0)", records: [draft]) }
            let results = try await sender.saveToInboxes(saves)
            #expect(results.map(\.zoneId) == saves.map(\.zoneId))
            #expect(results.dropLast().allSatisfy { $0.error == nil && $0.records.map(\.recordName) == ["m-1.0"] })
            #expect(results.last?.error?.code == .zoneNotFound)
            // One inbox's error in a 200 answer carries no HTTP status of its own.
            #expect(results.last?.error.map { $0.httpStatus == nil } == true)
            for member in fixture.members.dropFirst() {
                #expect(try await member.asset("inbox_\(member.did)", sha256Hex(Data(payload))).body == Data(payload))
            }
            // 20 copies of 30,000 bytes (40,000 in base64) in one request well under two copies' worth.
            let bytes = try #require(try await RawHTTP.metric(server.server, #"imprint_http_request_body_bytes_total{route="zone.saveToInboxes"}"#))
            #expect(bytes > 40_000 && bytes < 80_000, "\(bytes) bytes")
        }
    }

    @discardableResult
    func expectZoneError<T>(_ code: ZoneError.Code, sourceLocation: SourceLocation = #_sourceLocation,
                            _ body: () async throws -> T) async -> ZoneError? {
        let error = await expectAnyZoneError(sourceLocation: sourceLocation, body)
        #expect(error?.code == code, "got \(String(describing: error))", sourceLocation: sourceLocation)
        return error
    }

    @discardableResult
    func expectAnyZoneError<T>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T) async -> ZoneError? {
        do {
            _ = try await body()
            Issue.record("expected a ZoneError, got success", sourceLocation: sourceLocation)
        } catch let error as ZoneError {
            return error
        } catch {
            Issue.record("expected a ZoneError, got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }
}
