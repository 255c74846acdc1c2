import Foundation
import ImprintBundle
import ImprintServerTestSupport
import ImprintStore
import ImprintSync
import ImprintTestSupport
import ImprintZones
import Testing

/// A shared document's assets travel too: encrypted with a key of their own, chunked into
/// `attachment` records, announced to the members inside MLS, fetched on demand, uploaded
/// once per content, and readable by members who join later.
extension SyncSuites {
@Suite struct AssetSharingTests {
    /// A file of `count` seeded random bytes with `marker` planted at its start, in `directory`.
    static func file(_ name: String, count: Int, marker: String, seed: UInt64, in directory: TemporaryDirectory) throws -> (path: String, bytes: [UInt8]) {
        var rng = SplitMix64(seed: seed)
        var bytes = Array(marker.utf8)
        bytes += (0..<(count - bytes.count)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let path = directory.file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    static func bytes(of id: AssetID, in person: Person) throws -> [UInt8] {
        let bundle = try DocumentBundle.open(at: person.bundlePath, device: person.device)
        return Array(try Data(contentsOf: URL(fileURLWithPath: bundle.store.assets.path(of: id))))
    }

    @Test(arguments: StoreKind.available)
    func assetsReachMembersOnDemandAndJoinersLater(kind: StoreKind) async throws {
        let seed = testSeed("AssetSharingTests.\(kind)", fallback: 0xA55E_7001)
        let files = TemporaryDirectory("asset-files")
        // Three segments, the last one short (padded in the zone), and a small one.
        let figure = try Self.file("figure.png", count: 2 * ((1 << 20) - 16) + 12_345, marker: "ASSET-MARKER-77c1", seed: seed, in: files)
        let table = try Self.file("table.csv", count: 100, marker: "ASSET-MARKER-2d90", seed: seed &+ 1, in: files)
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob"), carol = try await server.person("carol")
            try alice.createBundle(text: "Figure 1 shows it.")
            var figureID: AssetID?
            try alice.edit { figureID = try $0.addAsset(contentsOf: figure.path, name: "figure.png") }
            let figureId = try #require(figureID)
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)

            let pushed = try await aliceDoc.push()
            #expect(pushed.assets == 1, "seed \(seed)")
            #expect(try await aliceDoc.push().assets == 0, "an asset the group has is not uploaded again")

            let pulled = try await bobDoc.pull()
            #expect(pulled.assets == 1)
            let known = try await bobDoc.sharedAssets()
            #expect(known.map(\.id) == [figureId] && known.first?.isLocal == false && known.first?.sharedBy == alice.did)
            #expect(known.first?.size == UInt64(figure.bytes.count))
            #expect(try DocumentBundle.open(at: bob.bundlePath, device: bob.device).assetReferences()[figureId.hex] == "figure.png",
                    "the reference travelled with the changes")
            #expect(try await bobDoc.fetchAsset(figureId))
            #expect(try Self.bytes(of: figureId, in: bob) == figure.bytes, "seed \(seed)")
            #expect(try await bobDoc.fetchAsset(figureId) == false, "already here")

            // Content the group already has is not uploaded again, whoever holds it.
            try bob.edit { _ = try $0.addAsset(contentsOf: figure.path, name: "copy.png") }
            var tableID: AssetID?
            try bob.edit { tableID = try $0.addAsset(contentsOf: table.path, name: "table.csv") }
            let tableId = try #require(tableID)
            #expect(try await bobDoc.push().assets == 1)
            #expect(try await aliceDoc.pull().assets == 1)
            #expect(try await aliceDoc.fetchAssets().map(\.id) == [tableId])
            #expect(try Self.bytes(of: tableId, in: alice) == table.bytes)

            // Carol joins in a later epoch: the keys come after the snapshot she starts from.
            try await aliceDoc.invite([carol.did])
            let carolDoc = try await carol.join(aliceDoc.convoId)
            _ = try await carolDoc.pull()
            #expect(Set(try await carolDoc.sharedAssets().map(\.id)) == [figureId, tableId])
            #expect(Set(try await carolDoc.fetchAssets().map(\.id)) == [figureId, tableId])
            #expect(try Self.bytes(of: figureId, in: carol) == figure.bytes && Self.bytes(of: tableId, in: carol) == table.bytes)

            // The zone holds the assets only as ciphertext: neither marker is in any server file.
            var files = SyncSuites.NoPlaintextOnServerTests.files(under: server.serverData)
            if case .postgres(let location) = server.database { files += try await SyncSuites.NoPlaintextOnServerTests.dump(location) }
            let stored = files.flatMap(\.bytes)
            #expect(stored.count > figure.bytes.count, "the scan read the stored ciphertext")
            for marker in ["ASSET-MARKER-77c1", "ASSET-MARKER-2d90"] {
                for form in SyncSuites.NoPlaintextOnServerTests.encodings(of: marker) {
                    #expect(!SyncSuites.NoPlaintextOnServerTests.contains(stored, form), "\(marker) on the server")
                }
            }
        }
    }

    /// A zone that answers for one asset's records with another's (same size) gets a typed
    /// error, and the bundle gains nothing; records that are not there yet say so.
    @Test(arguments: StoreKind.available)
    func swappedOrMissingRecordsAddNothing(kind: StoreKind) async throws {
        let seed = testSeed("AssetSharingTests.swapped.\(kind)", fallback: 0xA55E_7002)
        let files = TemporaryDirectory("asset-files")
        let first = try Self.file("a.bin", count: 5_000, marker: "A", seed: seed, in: files)
        let second = try Self.file("b.bin", count: 5_000, marker: "B", seed: seed &+ 1, in: files)
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "two files")
            var ids: [AssetID] = []
            try alice.edit { bundle in ids = [try bundle.addAsset(contentsOf: first.path, name: "a"), try bundle.addAsset(contentsOf: second.path, name: "b")] }
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            _ = try await bob.join(aliceDoc.convoId)
            #expect(try await aliceDoc.push().assets == 2)

            let swapping = SwappingZoneStore(bob.account.zones)
            let withholding = WithholdingZoneStore(swapping)
            let bobDoc = try await SharedDocument.open(bundleAt: bob.bundlePath, device: bob.device, account: bob.account.with(zones: withholding))
            _ = try await bobDoc.pull()
            // The record names come from the announcement; find them through the zone's feed.
            let feed = try await bob.account.zones.fetchChanges(zoneId: "doc_\(aliceDoc.convoId)", since: nil, limit: 1000)
            let bases = Set(feed.records.filter { $0.recordType == "attachment" }.map { String($0.recordName.split(separator: ".")[0]) })
            #expect(bases.count == 2)
            let sorted = bases.sorted()
            swapping.swap(from: sorted[0], to: sorted[1])
            swapping.swap(from: sorted[1], to: sorted[0])
            for id in ids {
                await #expect(throws: SyncError(.assetTampered, "")) { try await bobDoc.fetchAsset(id) }
            }
            let swapped = try await bobDoc.sharedAssets()
            #expect(swapped.count == 2 && swapped.allSatisfy { !$0.isLocal }, "nothing reached the bundle")

            withholding.withhold("att-")
            await #expect(throws: SyncError(.assetNotInZone, "")) { try await bobDoc.fetchAsset(ids[0]) }
            await #expect(throws: SyncError(.unknownAsset, "")) {
                try await bobDoc.fetchAsset(try AssetID(hex: String(repeating: "ab", count: 32)))
            }
        }
    }
}
}
