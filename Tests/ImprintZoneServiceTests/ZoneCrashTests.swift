import Foundation
import ImprintDelivery
import ImprintServerTestSupport
import ImprintZoneService
import Testing

/// A `kill -9` of the `imprint-server` executable in the middle of a stream of saves (inline
/// bytes, and uploads followed by saves) loses no record whose save was acknowledged, and
/// leaves no record whose asset is not whole: on SQLite (WAL, synchronous=NORMAL: a commit is in the
/// WAL before the answer, and the process dying does not lose what the OS holds) and on
/// PostgreSQL (the answer follows COMMIT).
@Suite struct ZoneCrashTests {
    /// Starts the executable on `data` and waits for its listening line (the port).
    static func launch(data: URL, db: String?) async throws -> (Process, Int) {
        let started = try await ServerExecutable.launchListening(
            ["--port", "0", "--data", data.path, "--service-did", RunningServer.serviceDID] + (db.map { ["--db", $0] } ?? []))
        return (started.process, started.port)
    }

    @Test(arguments: StoreKind.available)
    func killNineLosesNoAcknowledgedSave(_ kind: StoreKind) async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-zone-crash-\(UUID().uuidString)")
        var db: String?
        if kind == .postgres {
            let location = try await PostgresTestDatabase.create()
            db = "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)"
        }
        let signer = ServiceAuthSigner()
        let zoneId = "inbox_\(signer.did)"
        let (process, port) = try await Self.launch(data: data, db: db)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let client = ZoneTestClient(baseURL: "http://127.0.0.1:\(port)", signer: signer)
        try await client.createZone(zoneId)

        // Four writers stream saves; after 60 acknowledgements the process is killed mid-stream.
        let acknowledged = AcknowledgedNames()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for n in 0..<10_000 {
                        let name = "w\(writer)-\(n)"
                        do {
                            // Writers 0 and 1 save inline bytes; 2 and 3 upload 64 KiB first.
                            let bytes = testBytes(writer < 2 ? 512 : 64 << 10, seed: UInt64(writer * 100_000 + n))
                            let record = writer < 2
                                ? RecordToSave(recordName: name, recordType: "change", assetData: bytes)
                                : RecordToSave(recordName: name, recordType: "change", asset: try await client.upload(bytes, zoneId: zoneId))
                            let saved = try await client.save(zoneId, [record])
                            guard saved.first?.recordName == name else { return }
                            if acknowledged.add(name) == 60 { kill(process.processIdentifier, SIGKILL) }
                        } catch {
                            return  // the server is gone: this save was never acknowledged
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        let names = acknowledged.names
        #expect(names.count >= 60)

        let (restarted, newPort) = try await Self.launch(data: data, db: db)
        defer { if restarted.isRunning { kill(restarted.processIdentifier, SIGKILL) } }
        let after = ZoneTestClient(baseURL: "http://127.0.0.1:\(newPort)", signer: signer)
        let stored = try await after.fetchAll(zoneId, limit: 1000).records
        let present = Set(stored.map(\.recordName))
        let lost = names.subtracting(present)
        #expect(lost.isEmpty, "acknowledged but lost: \(lost.sorted().prefix(10))")
        // Every stored record's asset is whole: 20 inline ones, every uploaded one.
        for record in stored.filter({ $0.recordName.hasPrefix("w0-") }).prefix(20) + stored.filter({ $0.recordName.hasPrefix("w2-") || $0.recordName.hasPrefix("w3-") }) {
            let bytes = try await after.asset(zoneId, record.asset!.hash)
            #expect(bytes.status == 200 && sha256Hex(bytes.body) == record.asset!.hash)
        }
        kill(restarted.processIdentifier, SIGTERM)
        restarted.waitUntilExit()
        try? FileManager.default.removeItem(at: data)
    }
}

final class AcknowledgedNames: @unchecked Sendable {
    private let lock = NSLock()
    private var set = Set<String>()
    /// Adds `name`; returns how many are acknowledged now.
    func add(_ name: String) -> Int { lock.withLock { set.insert(name); return set.count } }
    var names: Set<String> { lock.withLock { set } }
}
