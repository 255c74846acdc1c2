import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import ImprintZoneService
import Testing

/// Uploads of one asset that overlap each other and the garbage collection of that same blob
/// (its last record deleted in another zone): whatever the interleaving, every acknowledged
/// upload can be saved and read back whole. On SQLite the blob is linked into place before
/// the transaction that records the upload, so the transaction must find (or put back) the
/// blob that a collection between the two removed.
@Suite struct ZoneUploadPlacementTests {
    @Test(arguments: StoreKind.available)
    func overlappingUploadsSurviveCollectionOfTheSameBlob(_ kind: StoreKind) async throws {
        try await withZoneServer(kind) { server in
            let dropper = server.client()
            let keeper = server.client()
            let dropZone = "inbox_\(dropper.did)"
            let keepZone = "inbox_\(keeper.did)"
            try await dropper.createZone(dropZone)
            try await keeper.createZone(keepZone)
            let bytes = testBytes(300_000, seed: 11)
            let hash = sha256Hex(bytes)
            for round in 0..<6 {
                let asset = try await dropper.upload(bytes, zoneId: dropZone)
                try await dropper.save(dropZone, [RecordToSave(recordName: "d\(round)", recordType: "change", asset: asset)])
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // The dropper's delete lets the collector take the blob, unless an upload
                    // of the keeper is recorded first.
                    group.addTask {
                        let deleted = try await dropper.delete(dropZone, ["d\(round)"])
                        #expect(deleted == ["d\(round)"])
                    }
                    for copy in 0..<3 {
                        group.addTask {
                            let uploaded = try await keeper.upload(bytes, zoneId: keepZone)
                            #expect(uploaded.hash == hash && uploaded.size == bytes.count)
                            try await keeper.save(keepZone, [RecordToSave(recordName: "k\(round)-\(copy)", recordType: "change", asset: uploaded)])
                        }
                    }
                    try await group.waitForAll()
                }
                let read = try await keeper.asset(keepZone, hash)
                #expect(read.status == 200 && sha256Hex(read.body) == hash)
                // The keeper's records go too, so the next round starts without the blob.
                _ = try await keeper.delete(keepZone, (0..<3).map { "k\(round)-\($0)" })
            }
            // Uploaded again after everything referencing it went: stored afresh and whole.
            let asset = try await keeper.upload(bytes, zoneId: keepZone)
            try await keeper.save(keepZone, [RecordToSave(recordName: "last", recordType: "change", asset: asset)])
            let read = try await keeper.asset(keepZone, hash)
            #expect(read.status == 200 && read.body == bytes)
        }
    }
}
