import Foundation
import ImprintDelivery
import ImprintServerTestSupport
import ImprintZoneService
import Testing

/// Who may do what: the Delivery Service roster at the moment of the request for shared zones,
/// records checked against the DS's messages, inbox and snapshot zones' owners.
@Suite struct ZoneAccessTests {
    @Test(arguments: StoreKind.available)
    func sharedZoneFollowsTheRosterAtOnce(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let fixture = try await SharedZoneFixture.make(on: server, members: 1)
            let member = fixture.members[0]
            let stranger = server.client()
            await expectServiceError(403, "NotMember") { try await stranger.createZone("doc_\(fixture.convoId)") }
            await expectServiceError(404, "NotFound") { try await stranger.createZone("doc_nosuchconvo") }
            await expectServiceError(409, "ZoneExists") { try await member.createZone(fixture.zoneId) }

            let record = try await fixture.change(Data("payload-1".utf8), from: member, on: server, name: "m1")
            try await member.save(fixture.zoneId, [record])
            #expect(try await fixture.owner.fetch(fixture.zoneId).records.map(\.recordName) == ["m1"])
            await expectServiceError(403, "NotMember") { try await stranger.fetch(fixture.zoneId) }
            await expectServiceError(403, "NotMember") { try await stranger.record(fixture.zoneId, "m1") }
            #expect(try await stranger.asset(fixture.zoneId, sha256Hex(Data("payload-1".utf8))).errorName == "NotMember")

            // The owner cannot delete the member's record; the member can delete its own.
            await expectServiceError(403, "Forbidden") { try await fixture.owner.delete(fixture.zoneId, ["m1"]) }

            // Removal: refused at once, for reads and writes.
            _ = try await server.delivery(fixture.owner).removeMember(RemoveMemberInput(
                convoId: fixture.convoId, epoch: 1, did: member.did, commit: Data("remove".utf8)))
            await expectServiceError(403, "NotMember") { try await member.fetch(fixture.zoneId) }
            await expectServiceError(403, "NotMember") { try await member.record(fixture.zoneId, "m1") }
            await expectServiceError(403, "NotMember") { try await member.delete(fixture.zoneId, ["m1"]) }
            await expectServiceError(403, "NotMember") {
                try await member.save(fixture.zoneId, [RecordToSave(recordName: "late", recordType: "note", assetData: Data([1]))])
            }
            await expectServiceError(403, "NotMember") { try await member.upload(Data([1, 2]), zoneId: fixture.zoneId) }

            // Deleting the zone: only the creator, and only once the convo has no active member.
            await expectServiceError(403, "Forbidden") { try await fixture.owner.deleteZone(fixture.zoneId) }
            try await server.delivery(fixture.owner).leaveConvo(convoId: fixture.convoId)
            await expectServiceError(403, "Forbidden") { try await member.deleteZone(fixture.zoneId) }
            try await fixture.owner.deleteZone(fixture.zoneId)
            await expectServiceError(404, "ZoneNotFound") { try await fixture.owner.deleteZone(fixture.zoneId) }
        }
    }

    @Test(arguments: StoreKind.available)
    func changeRecordsMustMatchTheCallersDeliveryMessage(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let fixture = try await SharedZoneFixture.make(on: server, members: 1)
            let member = fixture.members[0]
            let good = try await fixture.change(Data("mine".utf8), from: member, on: server, name: "c1")
            // Another member may not save a record for the member's message (squatting its seq).
            await expectServiceError(403, "Forbidden") { try await fixture.owner.save(fixture.zoneId, [good]) }
            // A payload hash that is not the message's.
            var altered = good
            altered.fields?["payloadHash"] = .string(String(repeating: "b", count: 64))
            await expectServiceError(403, "Forbidden") { try await member.save(fixture.zoneId, [altered]) }
            // A seq the Delivery Service never gave out.
            var unknown = good
            unknown.fields?["seq"] = .number(999)
            await expectServiceError(403, "Forbidden") { try await member.save(fixture.zoneId, [unknown]) }
            // Missing routing fields.
            await expectServiceError(400, "InvalidRequest") {
                try await member.save(fixture.zoneId, [RecordToSave(recordName: "c2", recordType: "commit", assetData: Data([1]))])
            }
            // Another convo's id in the fields.
            var foreign = good
            foreign.fields?["convoId"] = .string("someotherconvo")
            await expectServiceError(400, "InvalidRequest") { try await member.save(fixture.zoneId, [foreign]) }
            // The real thing, chunked: two records of one payload share the message's seq.
            var second = good
            second.recordName = "c1-1"
            second.fields?["chunkIndex"] = .number(1)
            let saved = try await member.save(fixture.zoneId, [good, second])
            #expect(saved.count == 2)
            #expect(try await member.delete(fixture.zoneId, ["c1", "c1-1"]) == ["c1", "c1-1"])
        }
    }

    @Test(arguments: StoreKind.available)
    func inboxesTakeAppendsFromConvoPartnersOnly(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let fixture = try await SharedZoneFixture.make(on: server, members: 1)
            let member = fixture.members[0]
            let stranger = server.client()
            let inbox = "inbox_\(fixture.owner.did)"
            await expectServiceError(403, "Forbidden") { try await member.createZone(inbox) }
            try await fixture.owner.createZone(inbox)
            try await member.save(inbox, [RecordToSave(recordName: "for-owner", recordType: "change", assetData: Data([9]))])
            _ = try await member.upload(Data([1, 2, 3]), zoneId: inbox)
            await expectServiceError(403, "Forbidden") {
                try await stranger.save(inbox, [RecordToSave(recordName: "spam", recordType: "change", assetData: Data([9]))])
            }
            await expectServiceError(403, "Forbidden") { try await member.fetch(inbox) }
            await expectServiceError(403, "Forbidden") { try await member.delete(inbox, ["for-owner"]) }
            #expect(try await fixture.owner.fetch(inbox).records.map(\.recordName) == ["for-owner"])
            #expect(try await fixture.owner.delete(inbox, ["for-owner"]) == ["for-owner"])
            await expectServiceError(403, "Forbidden") { try await member.deleteZone(inbox) }
            try await fixture.owner.deleteZone(inbox)
        }
    }

    /// v1.1 `saveToInboxes`: one request, each inbox with its own outcome, in order.
    @Test(arguments: StoreKind.available)
    func oneFanOutRequestSavesEachInboxOnItsOwn(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let fixture = try await SharedZoneFixture.make(on: server, members: 2)
            let (sender, partner) = (fixture.members[0], fixture.members[1])
            let stranger = server.client()
            for owner in [fixture.owner, partner, stranger] { try await owner.createZone("inbox_\(owner.did)") }
            let noInbox = server.client()
            let copy = RecordToSave(recordName: "c-1.0", recordType: "change", fields: ["seq": .number(1)], assetData: Data("copy".utf8))
            let output = try await sender.procedure(.saveToInboxes, SaveToInboxesInput(inboxes: [
                .init(zoneId: "inbox_\(fixture.owner.did)", records: [copy]),
                .init(zoneId: "inbox_\(stranger.did)", records: [copy]),
                .init(zoneId: "inbox_\(noInbox.did)", records: [copy]),
                .init(zoneId: "inbox_\(partner.did)", records: [copy]),
            ]), as: SaveToInboxesOutput.self)
            #expect(output.inboxes.map(\.zoneId) == ["inbox_\(fixture.owner.did)", "inbox_\(stranger.did)", "inbox_\(noInbox.did)", "inbox_\(partner.did)"])
            #expect(output.inboxes.map { $0.records?.map(\.recordName) ?? [] } == [["c-1.0"], [], [], ["c-1.0"]])
            #expect(output.inboxes.map(\.error) == [nil, "Forbidden", "ZoneNotFound", nil])
            #expect(try await fixture.owner.fetch("inbox_\(fixture.owner.did)").records.map(\.recordName) == ["c-1.0"])
            #expect(try await stranger.fetch("inbox_\(stranger.did)").records.isEmpty)
            // When the first inbox refuses, the next one stores the shared bytes for the rest.
            let second = RecordToSave(recordName: "c-2.0", recordType: "change", fields: ["seq": .number(2)], assetData: Data("copy-2".utf8))
            let again = try await sender.procedure(.saveToInboxes, SaveToInboxesInput(inboxes: [
                .init(zoneId: "inbox_\(noInbox.did)", records: [second]),
                .init(zoneId: "inbox_\(partner.did)", records: [second]),
                .init(zoneId: "inbox_\(fixture.owner.did)", records: [second]),
            ]), as: SaveToInboxesOutput.self)
            #expect(again.inboxes.map(\.error) == ["ZoneNotFound", nil, nil])
            #expect(try await fixture.owner.fetch("inbox_\(fixture.owner.did)").records.map(\.recordName) == ["c-1.0", "c-2.0"])
            let bytes = try await fixture.owner.asset("inbox_\(fixture.owner.did)", sha256Hex(Data("copy-2".utf8)))
            #expect(bytes.body == Data("copy-2".utf8))
            // Only inbox zones, each once; the same bytes stored once.
            await expectServiceError(400, "InvalidRequest") {
                try await sender.procedure(.saveToInboxes, SaveToInboxesInput(inboxes: [.init(zoneId: fixture.zoneId, records: [copy])]),
                                           as: SaveToInboxesOutput.self)
            }
            await expectServiceError(400, "InvalidRequest") {
                try await sender.procedure(.saveToInboxes, SaveToInboxesInput(inboxes: [
                    .init(zoneId: "inbox_\(partner.did)", records: [copy]), .init(zoneId: "inbox_\(partner.did)", records: [copy]),
                ]), as: SaveToInboxesOutput.self)
            }
        }
    }

    @Test(arguments: StoreKind.available)
    func quotasRefuseUploadsAndSaves(_ kind: StoreKind) async throws {
        try await withZoneServer(kind, configure: { $0.quotaBytes = 1000 }) { server in
            let owner = server.client()
            try await owner.createZone("share_quota")
            try await owner.save("share_quota", [RecordToSave(recordName: "a", recordType: "x", assetData: testBytes(900, seed: 2))])
            await expectServiceError(403, "QuotaExceeded") {
                try await owner.save("share_quota", [RecordToSave(recordName: "b", recordType: "x", assetData: testBytes(200, seed: 3))])
            }
            await expectServiceError(403, "QuotaExceeded") { try await owner.upload(testBytes(200, seed: 4), zoneId: "share_quota") }
            #expect(try await owner.usage().zones.map(\.bytes) == [900])
            #expect(try await owner.delete("share_quota", ["a"]) == ["a"])
            try await owner.save("share_quota", [RecordToSave(recordName: "b", recordType: "x", assetData: testBytes(200, seed: 3))])
        }
    }
}
