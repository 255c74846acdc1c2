import Foundation
import ImprintDelivery
import ImprintServerTestSupport
import ImprintZoneService
import Testing

/// `saveToInboxes` as one set-based store operation: every inbox decided on its own and
/// answered in order, the accepted ones saved in one transaction, (v1.3) one payload for
/// every inbox sent once in the request, and (v1.4) uploaded assets the sender holds taken by
/// every inbox without being sent again.
@Suite struct InboxFanOutTests {
    static func copy(_ n: Int, _ payload: String? = nil) -> RecordToSave {
        RecordToSave(recordName: "c-\(n).0", recordType: "change", fields: ["seq": .number(Double(n))],
                     assetData: Data((payload ?? "copy-\(n)").utf8))
    }

    func fanOut(_ sender: ZoneTestClient, _ input: SaveToInboxesInput) async throws -> SaveToInboxesOutput {
        try await sender.procedure(.saveToInboxes, input, as: SaveToInboxesOutput.self)
    }

    /// v1.3: the records once, beside the inboxes; an inbox with records of its own keeps them;
    /// refusals (no inbox, no shared convo, a capability) each answer for their inbox only.
    @Test(arguments: StoreKind.available)
    func oneSharedPayloadReachesEveryInboxThatMayTakeIt(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let fixture = try await SharedZoneFixture.make(on: server, members: 3)
            let sender = fixture.members[0]
            let (a, b) = (fixture.members[1], fixture.members[2])
            let stranger = server.client(), outsider = server.client(), noInbox = server.client()
            for owner in [fixture.owner, a, b, stranger, outsider] { try await owner.createZone("inbox_\(owner.did)") }
            _ = try await outsider.procedure(.putInboxCapability, PutInboxCapabilityInput(
                zoneId: "inbox_\(outsider.did)", name: "doc", keyHash: sha256Hex(Data("cap".utf8))), as: EmptyOutput.self)
            let output = try await fanOut(sender, SaveToInboxesInput(inboxes: [
                .init(zoneId: "inbox_\(fixture.owner.did)"),
                .init(zoneId: "inbox_\(stranger.did)"),
                .init(zoneId: "inbox_\(a.did)", records: [Self.copy(1, "own-bytes")]),
                .init(zoneId: "inbox_\(noInbox.did)"),
                .init(zoneId: "inbox_\(outsider.did)", capability: "cap"),
                .init(zoneId: "inbox_\(b.did)"),
            ], records: [Self.copy(1)]))
            #expect(output.inboxes.map(\.zoneId) == [fixture.owner, stranger, a, noInbox, outsider, b].map { "inbox_\($0.did)" })
            #expect(output.inboxes.map(\.error) == [nil, "Forbidden", nil, "ZoneNotFound", nil, nil])
            #expect(output.inboxes.map { $0.records?.map(\.recordName) ?? [] } == [["c-1.0"], [], ["c-1.0"], [], ["c-1.0"], ["c-1.0"]])
            let shared = sha256Hex(Data("copy-1".utf8))
            for owner in [fixture.owner, outsider, b] {
                let records = try await owner.fetch("inbox_\(owner.did)").records
                #expect(records.map(\.recordName) == ["c-1.0"])
                #expect(records.first?.asset?.hash == shared)
                #expect(try await owner.asset("inbox_\(owner.did)", shared).body == Data("copy-1".utf8))
            }
            #expect(try await a.fetch("inbox_\(a.did)").records.first?.asset?.hash == sha256Hex(Data("own-bytes".utf8)))
            #expect(try await stranger.fetch("inbox_\(stranger.did)").records.isEmpty)
            #expect(try await b.usage().zones.first { $0.zoneId == "inbox_\(b.did)" } == ZoneUsage(zoneId: "inbox_\(b.did)", records: 1, bytes: 6))
        }
    }

    /// A retry answers with the stored records and writes nothing; a name taken with another
    /// hash, a missing upload or a full quota refuses its inbox alone; each zone's change
    /// numbers follow on from its own, in record order.
    @Test(arguments: StoreKind.available)
    func retriesConflictsAndQuotasAreDecidedPerInbox(_ kind: StoreKind) async throws {
        // 85,008 bytes: c's owner, holding 40,006, can take the 45,000-byte upload (85,006) but not
        // the save of it with a 6-byte copy beside it (85,012).
        try await withZoneServer(kind, configure: { $0.quotaBytes = 85_008 }) { server in
            let fixture = try await SharedZoneFixture.make(on: server, members: 3)
            let sender = fixture.members[0]
            let (a, b, c) = (fixture.owner, fixture.members[1], fixture.members[2])
            let inboxes = [a, b, c].map { "inbox_\($0.did)" }
            for (owner, inbox) in zip([a, b, c], inboxes) { try await owner.createZone(inbox) }
            let first = try await fanOut(sender, SaveToInboxesInput(inboxes: inboxes.map { .init(zoneId: $0) }, records: [Self.copy(1)]))
            #expect(first.inboxes.map(\.error) == [nil, nil, nil])
            let tokens = try await [a, b, c].asyncMap { try await $0.fetch("inbox_\($0.did)").changeToken }

            // The same request again: the stored records, nothing new in any zone.
            let retry = try await fanOut(sender, SaveToInboxesInput(inboxes: inboxes.map { .init(zoneId: $0) }, records: [Self.copy(1)]))
            #expect(retry.inboxes.map { $0.records?.map(\.changeToken) } == first.inboxes.map { $0.records?.map(\.changeToken) })
            for (owner, token) in zip([a, b, c], tokens) {
                #expect(try await owner.fetch("inbox_\(owner.did)", since: token).records.isEmpty)
            }

            // b holds c-2.0 with other bytes already; c's owner is near its quota; a takes an
            // asset its owner uploaded there, which the sender never held.
            _ = try await fanOut(sender, SaveToInboxesInput(inboxes: [.init(zoneId: inboxes[1])], records: [Self.copy(2, "other")]))
            try await c.createZone("share_filler")
            _ = try await c.save("share_filler", [RecordToSave(recordName: "f", recordType: "x", assetData: testBytes(40_000, seed: 1))])
            let big = testBytes(45_000, seed: 2)
            let uploaded = try await a.upload(big, zoneId: inboxes[0])
            let two = [Self.copy(2), RecordToSave(recordName: "c-2.1", recordType: "change", fields: ["seq": .number(2)], asset: uploaded)]
            let mixed = try await fanOut(sender, SaveToInboxesInput(inboxes: inboxes.map { .init(zoneId: $0) }, records: two))
            #expect(mixed.inboxes.map(\.error) == [nil, "RecordExists", "InvalidRequest"])
            let saved = try await a.fetch(inboxes[0], since: tokens[0]).records
            #expect(saved.map(\.recordName) == ["c-2.0", "c-2.1"])
            #expect(saved.map(\.changeToken) == mixed.inboxes[0].records?.map(\.changeToken))
            #expect(try await b.fetch(inboxes[1], since: tokens[1]).records.map(\.recordName) == ["c-2.0"])
            #expect(try await c.fetch(inboxes[2], since: tokens[2]).records.isEmpty)
            // With the upload there too, c's quota is what refuses it.
            _ = try await sender.upload(big, zoneId: inboxes[2])
            let quota = try await fanOut(sender, SaveToInboxesInput(inboxes: [.init(zoneId: inboxes[2])], records: two))
            #expect(quota.inboxes.map(\.error) == ["QuotaExceeded"])
        }
    }

    /// v1.4: an asset the sender holds on the server (uploaded by it to any zone, or named by
    /// a live record it saved) may go into every inbox without its bytes again; one it never
    /// held, or no longer holds, may not.
    @Test(arguments: StoreKind.available)
    func assetsTheSenderHoldsReachInboxesWithoutBeingSentAgain(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let fixture = try await SharedZoneFixture.make(on: server, members: 4)
            let sender = fixture.members[0]
            let (a, b, c) = (fixture.members[1], fixture.members[2], fixture.members[3])
            let inboxes = [a, b, c].map { "inbox_\($0.did)" }
            for (owner, inbox) in zip([a, b, c], inboxes) { try await owner.createZone(inbox) }
            let big = testBytes(60_000, seed: 3)
            func chunk(_ n: Int, _ asset: ZoneAssetRef) -> RecordToSave {
                RecordToSave(recordName: "c-\(n).0", recordType: "change", fields: ["seq": .number(Double(n))], asset: asset)
            }
            // Uploaded once, into a's inbox: a and b take it.
            let uploaded = try await sender.upload(big, zoneId: inboxes[0])
            let first = try await fanOut(sender, SaveToInboxesInput(inboxes: inboxes.prefix(2).map { .init(zoneId: $0) }, records: [chunk(1, uploaded)]))
            #expect(first.inboxes.map(\.error) == [nil, nil])
            // The upload is consumed; the sender's records in a and b still hold the bytes.
            let again = try await fanOut(sender, SaveToInboxesInput(inboxes: [.init(zoneId: inboxes[2])], records: [chunk(1, uploaded)]))
            #expect(again.inboxes.map(\.error) == [nil])
            for (owner, inbox) in zip([a, b, c], inboxes) {
                #expect(try await owner.asset(inbox, uploaded.hash).body == big)
            }
            // The wrong size, or bytes someone else uploaded to a zone of theirs: refused.
            let wrong = ZoneAssetRef(hash: uploaded.hash, size: uploaded.size + 1)
            let theirs = try await c.upload(testBytes(50_000, seed: 4), zoneId: inboxes[2])
            let refused = try await fanOut(sender, SaveToInboxesInput(inboxes: [
                .init(zoneId: inboxes[0], records: [chunk(2, wrong)]), .init(zoneId: inboxes[1], records: [chunk(3, theirs)]),
            ]))
            #expect(refused.inboxes.map(\.error) == ["InvalidRequest", "InvalidRequest"])
            // Once every record of the sender naming it is gone, it no longer holds the bytes.
            for (owner, inbox) in zip([a, b, c], inboxes) { _ = try await owner.delete(inbox, ["c-1.0"]) }
            let gone = try await fanOut(sender, SaveToInboxesInput(inboxes: [.init(zoneId: inboxes[0])], records: [chunk(4, uploaded)]))
            #expect(gone.inboxes.map(\.error) == ["InvalidRequest"])
        }
    }

    @Test(arguments: StoreKind.available)
    func malformedFanOutsAreRefusedWhole(_ kind: StoreKind) async throws {
        try await withZoneServer(kind, configure: { $0.maxRecordsPerSave = 4 }) { server in
            let owner = server.client()
            let inbox = "inbox_\(owner.did)"
            try await owner.createZone(inbox)
            let bad: [SaveToInboxesInput] = [
                SaveToInboxesInput(inboxes: [.init(zoneId: inbox)]),  // no records anywhere
                SaveToInboxesInput(inboxes: [], records: [Self.copy(1)]),
                SaveToInboxesInput(inboxes: [.init(zoneId: inbox)], records: []),
                SaveToInboxesInput(inboxes: [.init(zoneId: inbox)], records: [Self.copy(1), Self.copy(1)]),
                SaveToInboxesInput(inboxes: (0..<5).map { _ in .init(zoneId: "inbox_\(server.client().did)") }, records: [Self.copy(1)]),
            ]
            for input in bad {
                await expectServiceError(400, "InvalidRequest") { try await self.fanOut(owner, input) }
            }
            #expect(try await owner.fetch(inbox).records.isEmpty)
        }
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
