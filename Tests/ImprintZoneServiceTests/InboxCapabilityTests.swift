import Foundation
import ImprintDelivery
import ImprintServerTestSupport
import ImprintZoneService
import Testing

/// v1.2 inbox write capabilities: an inbox's owner registers the hash of a value it hands
/// out (inside an MLS group living on another server), and callers who share no convo with
/// the owner here may append while they present it; replacing or withdrawing it revokes it.
@Suite struct InboxCapabilityTests {
    static let header = "Imprint-Inbox-Capability"

    func put(_ owner: ZoneTestClient, _ zoneId: String, name: String, capability: String?) async throws {
        _ = try await owner.procedure(.putInboxCapability,
                                      PutInboxCapabilityInput(zoneId: zoneId, name: name, keyHash: capability.map { sha256Hex(Data($0.utf8)) }),
                                      as: EmptyOutput.self)
    }

    func save(_ caller: ZoneTestClient, _ zoneId: String, _ record: RecordToSave, capability: String?) async throws -> RawResponse {
        try await caller.call(.saveRecords, json: try WireJSON.encoder().encode(SaveRecordsInput(zoneId: zoneId, records: [record])),
                              headers: capability.map { [(Self.header, $0)] } ?? [])
    }

    @Test(arguments: StoreKind.available)
    func aRegisteredCapabilityLetsStrangersAppendUntilItIsReplaced(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let owner = server.client(), sender = server.client(), other = server.client()
            let inbox = "inbox_\(owner.did)"
            try await owner.createZone(inbox)
            let copy = { (n: Int) in
                RecordToSave(recordName: "c-\(n).0", recordType: "change", fields: ["seq": .number(Double(n))], assetData: Data("copy-\(n)".utf8))
            }
            // No shared convo, no capability: refused.
            #expect(try await save(sender, inbox, copy(1), capability: nil).errorName == "Forbidden")
            try await put(owner, inbox, name: "convo-a", capability: "epoch-1-secret")
            #expect(try await save(sender, inbox, copy(1), capability: "wrong").errorName == "Forbidden")
            #expect(try await save(sender, inbox, copy(1), capability: "epoch-1-secret").status == 200)
            // Uploads too (a chunked copy), with the header.
            let big = testBytes(70_000, seed: 7)
            let refused = try await sender.call(.uploadAsset, query: [("zoneId", inbox)], raw: big)
            #expect(refused.errorName == "Forbidden")
            let uploaded = try await sender.call(.uploadAsset, query: [("zoneId", inbox)], raw: big, headers: [(Self.header, "epoch-1-secret")])
            #expect(uploaded.status == 200)
            // The fan-out request carries one capability per inbox.
            let fanOut = try await other.procedure(.saveToInboxes, SaveToInboxesInput(inboxes: [
                .init(zoneId: inbox, records: [copy(2)], capability: "epoch-1-secret"),
            ]), as: SaveToInboxesOutput.self)
            #expect(fanOut.inboxes.map(\.error) == [nil])
            // A new epoch replaces the value: the old one is refused at once.
            try await put(owner, inbox, name: "convo-a", capability: "epoch-2-secret")
            #expect(try await save(sender, inbox, copy(3), capability: "epoch-1-secret").errorName == "Forbidden")
            #expect(try await save(sender, inbox, copy(3), capability: "epoch-2-secret").status == 200)
            // Another document's capability is independent; withdrawing removes it.
            try await put(owner, inbox, name: "convo-b", capability: "other-doc")
            #expect(try await save(sender, inbox, copy(4), capability: "other-doc").status == 200)
            try await put(owner, inbox, name: "convo-b", capability: nil)
            #expect(try await save(sender, inbox, copy(5), capability: "other-doc").errorName == "Forbidden")
            // Still only the owner reads.
            await expectServiceError(403, "Forbidden") { try await sender.fetch(inbox) }
            #expect(try await owner.fetch(inbox).records.map(\.recordName) == ["c-1.0", "c-2.0", "c-3.0", "c-4.0"])
        }
    }

    @Test(arguments: StoreKind.available)
    func onlyTheOwnerOfAnInboxHandsOutCapabilities(_ kind: StoreKind) async throws {
        try await withZoneServer(kind, configure: { $0.maxInboxCapabilities = 2 }) { server in
            let owner = server.client(), stranger = server.client()
            let inbox = "inbox_\(owner.did)"
            try await owner.createZone(inbox)
            try await owner.createZone("share_mine")
            await expectServiceError(403, "Forbidden") { try await self.put(stranger, inbox, name: "x", capability: "mine-now") }
            await expectServiceError(400, "InvalidRequest") { try await self.put(owner, "share_mine", name: "x", capability: "v") }
            await expectServiceError(404, "ZoneNotFound") { try await self.put(stranger, "inbox_\(stranger.did)", name: "x", capability: "v") }
            await expectServiceError(400, "InvalidRequest") { try await self.put(owner, inbox, name: "", capability: "v") }
            await expectServiceError(400, "InvalidRequest") {
                _ = try await owner.procedure(.putInboxCapability, PutInboxCapabilityInput(zoneId: inbox, name: "x", keyHash: "not-hex"),
                                              as: EmptyOutput.self)
            }
            try await put(owner, inbox, name: "a", capability: "1")
            try await put(owner, inbox, name: "b", capability: "2")
            await expectServiceError(403, "Forbidden") { try await self.put(owner, inbox, name: "c", capability: "3") }
            try await put(owner, inbox, name: "b", capability: "2b")  // replacing stays within the limit
            // Deleting the inbox takes its capabilities with it.
            try await owner.deleteZone(inbox)
            try await owner.createZone(inbox)
            #expect(try await save(stranger, inbox, RecordToSave(recordName: "r", recordType: "change", assetData: Data("x".utf8)),
                                   capability: "1").errorName == "Forbidden")
        }
    }
}
