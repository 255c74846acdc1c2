import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import ImprintDelivery
import ImprintEncoding
import ImprintServer
import ImprintTestSupport
import ImprintZones
import NIOCore

/// `imprint-bench zones`: the zone service's throughput over loopback HTTP against a real
/// `imprint-server` process (`--benchmark-endpoints`), on SQLite and, when a PostgreSQL URL is
/// given (`--postgres-url`, or `IMPRINT_TEST_POSTGRES_URL` under `scripts/with-postgres.sh`),
/// on PostgreSQL, through the client apps use (`HTTPZoneStore`):
/// - 1 KiB records: `saveRecords` in batches of 100 (bytes inline), then reading them back
///   (`fetchChanges` pages of 1000, then `getAsset` for each, 8 at a time);
/// - 1 MiB records: `uploadAsset` + `saveRecords` per record, `--uploads-in-flight` records
///   at a time (1: one after another; as `ZoneChunker` uploads, 4 by default), then
///   `fetchChanges` and `getAsset` one after another;
/// - catch-up: a zone of `--catch-up` 1 KiB records read from an empty token, as a client
///   that was away reads it (pages of the default 200; then every record's bytes, 8 at a time).
///
/// The ceiling, in the same run against the same server: the same bytes, request for request,
/// posted to a route that reads and drops them (`app.imprint.bench.discard`) and fetched from
/// one that makes them up (`app.imprint.bench.source`), with the same number of requests in
/// flight as the zone methods had. Both pass the same HTTP stack and
/// authentication gate as the zone methods, so the ratio is the cost of the zone service
/// itself: validation, hashing, the staged file, fsyncs, the database. Medians over `--runs`.
/// Beside the 1 MiB saves and their ceiling, the CPU time (user + system, in clock ticks) the
/// server process and this one spent in each, per record: with client and server on the same
/// few cores, the ratio follows the CPU each path costs per MiB.
struct ZoneBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zones",
        abstract: "Zone service throughput (saveRecords, fetchChanges, getAsset) beside a discard ceiling, SQLite and PostgreSQL.")

    @Option(help: "1 KiB records saved and read per run.") var smallRecords = 2000
    @Option(help: "1 MiB records saved and read per run.") var largeRecords = 32
    @Option(help: "Records in the catch-up zone (0 skips it).") var catchUp = 10_000
    @Option(help: "Runs (medians are reported).") var runs = 3
    @Option(help: "PostgreSQL URL (default: $IMPRINT_TEST_POSTGRES_URL; none: SQLite only).") var postgresURL: String?
    @Option(help: "The imprint-server executable (default: beside this one).") var server: String?
    @Option(help: "Seed of the record bytes.") var seed: UInt64 = 20_261_125
    @Option(help: "1 MiB records saved at once (uploadAsset + saveRecords each); the ceiling posts as many at once.")
    var uploadsInFlight = 4
    @Flag(help: "Print one JSON object per store.") var json = false

    static let smallBytes = 1 << 10
    static let largeBytes = 1 << 20
    static let smallBatch = 100
    static let fetchConcurrency = 8

    func run() async throws {
        var stores: [(String, String?)] = [("sqlite", nil)]
        if let url = postgresURL ?? ProcessInfo.processInfo.environment["IMPRINT_TEST_POSTGRES_URL"], !url.isEmpty {
            stores.append(("postgres", url))
        }
        for (name, url) in stores {
            let directory = NSTemporaryDirectory() + "imprint-bench-zones-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let process = try ServerProcess.start(executable: server, data: directory, db: url, extraArguments: ["--benchmark-endpoints"])
            defer { process.stop() }
            var measured: [Run] = []
            for index in 0..<runs {
                measured.append(try await oneRun(serverURL: process.url, serverPID: process.pid, index: index))
                if !json { FileHandle.standardError.write(Data("zones \(name): run \(index + 1) of \(runs)\n".utf8)) }
            }
            var catchUpFigures: CatchUp?
            if catchUp > 0 { catchUpFigures = try await catchUpRun(try await BenchZoneClient.connect(serverURL: process.url)) }
            report(store: name, runs: measured, catchUp: catchUpFigures)
        }
    }

    // MARK: One run

    struct Run {
        var smallSave = 0.0, smallSaveCeiling = 0.0, smallFetch = 0.0, smallFetchCeiling = 0.0
        var largeSave = 0.0, largeSaveCeiling = 0.0, largeFetch = 0.0, largeFetchCeiling = 0.0
        /// Per 1 MiB record, summed over the records: the seconds from `uploadAsset`'s start to
        /// its answer, and from `saveRecords`' start to its answer (wall time when one record
        /// is in flight; latencies that overlap when several are).
        var largeUpload = 0.0, largeSaveRecord = 0.0
        /// CPU seconds (user + system) the server process and this one spent during the 1 MiB
        /// saves and during their ceiling: where the time went when the cores are the limit.
        var largeSaveServerCPU = 0.0, largeSaveClientCPU = 0.0, largeCeilingServerCPU = 0.0, largeCeilingClientCPU = 0.0
    }

    func oneRun(serverURL: String, serverPID: Int32, index: Int) async throws -> Run {
        var random = SplitMix64(seed: seed &+ UInt64(index))
        var run = Run()
        let small = (0..<smallRecords).map { _ in random.nextBytes(Self.smallBytes) }
        let large = (0..<largeRecords).map { _ in random.nextBytes(Self.largeBytes) }
        // Each set of records goes to the inbox zone of a fresh caller (`inbox_<did>`: its
        // owner reads and writes it without a roster question; shared zones add one roster
        // lookup per request, and for change/commit records the Delivery Service's message check).
        var client = try await BenchZoneClient.connect(serverURL: serverURL)

        // 1 KiB records: saved inline, 100 to a batch; the ceiling posts each batch's bytes.
        let smallZone = client.inbox
        _ = try await client.zones.createZone(smallZone)
        let batches = stride(from: 0, to: small.count, by: Self.smallBatch).map { Array($0..<min($0 + Self.smallBatch, small.count)) }
        run.smallSave = try await Self.seconds {
            for batch in batches {
                _ = try await client.zones.saveRecords(zoneId: smallZone, batch.map { Self.draft(index: $0, asset: .inline(small[$0])) })
            }
        }
        run.smallSaveCeiling = try await Self.seconds {
            for batch in batches { try await client.discard(batch.flatMap { small[$0] }) }
        }
        run.smallFetch = try await Self.seconds {
            let records = try await client.allRecords(smallZone, pageSize: 1000)
            guard records.count == small.count else { throw ValidationError("fetchChanges gave \(records.count) of \(small.count) records") }
            try await client.fetchAssets(smallZone, records.map(\.asset.hash), concurrency: Self.fetchConcurrency)
        }
        run.smallFetchCeiling = try await Self.seconds {
            try await client.source(size: Self.smallBytes, times: small.count, concurrency: Self.fetchConcurrency)
        }

        try await client.zones.deleteZone(smallZone)

        // 1 MiB records: uploadAsset then saveRecords per record, `uploadsInFlight` records at
        // a time; the ceiling posts the same bytes with as many requests in flight.
        client = try await BenchZoneClient.connect(serverURL: serverURL)
        let largeZone = client.inbox
        _ = try await client.zones.createZone(largeZone)
        let zones = client.zones
        var latencies: [(upload: Double, save: Double)] = []
        var cpu = (server: ProcessCPU.seconds(pid: serverPID), client: ProcessCPU.seconds())
        run.largeSave = try await Self.seconds {
            latencies = try await concurrentMap(Array(large.enumerated()), width: uploadsInFlight) { index, bytes in
                var asset: ZoneAsset?
                let upload = try await Self.seconds { asset = try await zones.uploadAsset(zoneId: largeZone, bytes: bytes) }
                let save = try await Self.seconds {
                    _ = try await zones.saveRecords(zoneId: largeZone, [Self.draft(index: index, asset: .uploaded(asset!))])
                }
                return (upload, save)
            }
        }
        (run.largeSaveServerCPU, run.largeSaveClientCPU) = (ProcessCPU.seconds(pid: serverPID) - cpu.server, ProcessCPU.seconds() - cpu.client)
        run.largeUpload = latencies.reduce(0) { $0 + $1.upload }
        run.largeSaveRecord = latencies.reduce(0) { $0 + $1.save }
        cpu = (server: ProcessCPU.seconds(pid: serverPID), client: ProcessCPU.seconds())
        run.largeSaveCeiling = try await Self.seconds {
            try await BenchZoneClient.forEach(large, concurrency: uploadsInFlight) { [client] bytes in try await client.discard(bytes) }
        }
        (run.largeCeilingServerCPU, run.largeCeilingClientCPU) = (ProcessCPU.seconds(pid: serverPID) - cpu.server, ProcessCPU.seconds() - cpu.client)
        run.largeFetch = try await Self.seconds {
            let records = try await client.allRecords(largeZone, pageSize: 1000)
            guard records.count == large.count else { throw ValidationError("fetchChanges gave \(records.count) of \(large.count) records") }
            try await client.fetchAssets(largeZone, records.map(\.asset.hash), concurrency: 1)
        }
        run.largeFetchCeiling = try await Self.seconds {
            try await client.source(size: Self.largeBytes, times: large.count, concurrency: 1)
        }
        try await client.zones.deleteZone(largeZone)
        return run
    }

    struct CatchUp {
        var feedSeconds: Double
        var totalSeconds: Double
        var pages: Int
    }

    /// A zone of `catchUp` records (saved in batches of 400, not timed), read from an empty token.
    func catchUpRun(_ client: BenchZoneClient) async throws -> CatchUp {
        var random = SplitMix64(seed: seed ^ 0xC0FFEE)
        let zone = client.inbox
        _ = try await client.zones.createZone(zone)
        for start in stride(from: 0, to: catchUp, by: ZoneLimits.maximumBatchRecords) {
            let drafts = (start..<min(start + ZoneLimits.maximumBatchRecords, catchUp)).map { Self.draft(index: $0, asset: .inline(random.nextBytes(Self.smallBytes))) }
            _ = try await client.zones.saveRecords(zoneId: zone, drafts)
        }
        var feed: [Double] = [], total: [Double] = []
        var pages = 0
        for _ in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            var token: ZoneChangeToken?
            var hashes: [String] = []
            pages = 0
            while true {
                let page = try await client.zones.fetchChanges(zoneId: zone, since: token)
                hashes += page.records.map(\.asset.hash)
                token = page.changeToken
                pages += 1
                if !page.moreComing { break }
            }
            guard hashes.count == catchUp else { throw ValidationError("catch-up read \(hashes.count) of \(catchUp) records") }
            let fed = DispatchTime.now().uptimeNanoseconds
            try await client.fetchAssets(zone, hashes, concurrency: Self.fetchConcurrency)
            let end = DispatchTime.now().uptimeNanoseconds
            feed.append(Double(fed - start) / 1e9)
            total.append(Double(end - start) / 1e9)
        }
        try await client.zones.deleteZone(zone)
        return CatchUp(feedSeconds: Clock.median(feed), totalSeconds: Clock.median(total), pages: pages)
    }

    // MARK: Report

    func report(store: String, runs measured: [Run], catchUp: CatchUp?) {
        func median(_ key: KeyPath<Run, Double>) -> Double { Clock.median(measured.map { $0[keyPath: key] }) }
        func rate(_ count: Int, _ seconds: Double) -> String { String(format: "%.1f", Double(count) / seconds) }
        func megabytes(_ count: Int, _ size: Int, _ seconds: Double) -> String {
            String(format: "%.1f", Double(count * size) / 1_048_576 / seconds)
        }
        func ratio(_ zone: KeyPath<Run, Double>, _ ceiling: KeyPath<Run, Double>) -> String {
            // Same bytes in both, so the throughput ratio is the inverse ratio of times.
            String(format: "%.2f", Clock.median(measured.map { $0[keyPath: ceiling] / $0[keyPath: zone] }))
        }
        var fields: [(String, String)] = [
            ("store", "\"\(store)\""),
            ("small_records", "\(smallRecords)"), ("large_records", "\(largeRecords)"), ("runs", "\(measured.count)"),
            ("small_save_records_per_s", rate(smallRecords, median(\.smallSave))),
            ("small_save_mb_per_s", megabytes(smallRecords, Self.smallBytes, median(\.smallSave))),
            ("small_save_ceiling_mb_per_s", megabytes(smallRecords, Self.smallBytes, median(\.smallSaveCeiling))),
            ("small_save_of_ceiling", ratio(\.smallSave, \.smallSaveCeiling)),
            ("small_fetch_records_per_s", rate(smallRecords, median(\.smallFetch))),
            ("small_fetch_ceiling_per_s", rate(smallRecords, median(\.smallFetchCeiling))),
            ("small_fetch_of_ceiling", ratio(\.smallFetch, \.smallFetchCeiling)),
            ("large_save_mb_per_s", megabytes(largeRecords, Self.largeBytes, median(\.largeSave))),
            ("large_save_ceiling_mb_per_s", megabytes(largeRecords, Self.largeBytes, median(\.largeSaveCeiling))),
            ("large_save_of_ceiling", ratio(\.largeSave, \.largeSaveCeiling)),
            ("large_uploads_in_flight", "\(uploadsInFlight)"),
            ("large_upload_ms_per_record", Clock.format(median(\.largeUpload) * 1000 / Double(largeRecords))),
            ("large_save_record_ms_per_record", Clock.format(median(\.largeSaveRecord) * 1000 / Double(largeRecords))),
            ("large_save_server_cpu_ms_per_record", Clock.format(median(\.largeSaveServerCPU) * 1000 / Double(largeRecords))),
            ("large_save_client_cpu_ms_per_record", Clock.format(median(\.largeSaveClientCPU) * 1000 / Double(largeRecords))),
            ("large_ceiling_server_cpu_ms_per_record", Clock.format(median(\.largeCeilingServerCPU) * 1000 / Double(largeRecords))),
            ("large_ceiling_client_cpu_ms_per_record", Clock.format(median(\.largeCeilingClientCPU) * 1000 / Double(largeRecords))),
            ("large_fetch_mb_per_s", megabytes(largeRecords, Self.largeBytes, median(\.largeFetch))),
            ("large_fetch_ceiling_mb_per_s", megabytes(largeRecords, Self.largeBytes, median(\.largeFetchCeiling))),
            ("large_fetch_of_ceiling", ratio(\.largeFetch, \.largeFetchCeiling)),
        ]
        if let catchUp {
            fields += [
                ("catch_up_records", "\(self.catchUp)"), ("catch_up_pages", "\(catchUp.pages)"),
                ("catch_up_feed_s", Clock.format(catchUp.feedSeconds)),
                ("catch_up_with_bytes_s", Clock.format(catchUp.totalSeconds)),
                ("catch_up_records_per_s", rate(self.catchUp, catchUp.totalSeconds)),
            ]
        }
        fields.append(("load_avg_1m", Clock.format(SystemLoad.oneMinute())))
        if json {
            print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
        } else {
            for (key, value) in fields { print("\(key.padding(toLength: 40, withPad: " ", startingAt: 0)) \(value)") }
        }
    }

    // MARK: Parts

    static func draft(index: Int, asset: ZoneRecordDraft.Asset) -> ZoneRecordDraft {
        ZoneRecordDraft(recordName: "r\(index)", recordType: "change", fields: ZoneRecordFields(seq: Int64(index)), asset: asset)
    }

    static func seconds(_ body: () async throws -> Void) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}

/// The benchmark's caller: a fresh did:key on the server, its zone store, and the two
/// ceiling routes signed by the same identity.
struct BenchZoneClient: Sendable {
    let zones: HTTPZoneStore
    let requests: XRPCRequestBuilder
    /// The caller's own inbox zone.
    var inbox: String { "inbox_\(requests.signer.did)" }

    static func connect(serverURL: String) async throws -> BenchZoneClient {
        let signer = ServiceAuthSigner(privateKey: Curve25519.Signing.PrivateKey())
        let serviceDID = try await DeliveryClient(baseURL: serverURL, serviceDID: "", signer: signer, httpClient: benchHTTPClient).health().did
        return BenchZoneClient(
            zones: HTTPZoneStore(baseURL: serverURL, serviceDID: serviceDID, signer: signer, httpClient: benchHTTPClient),
            requests: XRPCRequestBuilder(baseURL: serverURL, serviceDID: serviceDID, signer: signer))
    }

    /// Every record of a zone, from an empty token.
    func allRecords(_ zoneId: String, pageSize: Int) async throws -> [ZoneRecord] {
        var token: ZoneChangeToken?
        var records: [ZoneRecord] = []
        while true {
            let page = try await zones.fetchChanges(zoneId: zoneId, since: token, limit: pageSize)
            records += page.records
            token = page.changeToken
            if !page.moreComing { return records }
        }
    }

    /// Fetches (and hash-checks, as `HTTPZoneStore` does) every asset, `concurrency` at a time.
    func fetchAssets(_ zoneId: String, _ hashes: [String], concurrency: Int) async throws {
        try await Self.forEach(hashes, concurrency: concurrency) { hash in _ = try await zones.fetchAsset(zoneId: zoneId, hash: hash) }
    }

    /// Posts `bytes` to the discard route.
    func discard(_ bytes: [UInt8]) async throws {
        var request = try requests.request(path: "/xrpc/\(ThroughputCeiling.discardNSID)", query: [], method: .POST,
                                           lxm: ThroughputCeiling.discardNSID)
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.body = .bytes(ByteBuffer(bytes: bytes))
        let response = try await benchHTTPClient.execute(request, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 1 << 10)
        guard response.status == .ok else { throw ValidationError("discard answered \(response.status)") }
    }

    /// Fetches `size` bytes from the source route `times` times, `concurrency` at a time.
    func source(size: Int, times: Int, concurrency: Int) async throws {
        try await Self.forEach(Array(0..<times), concurrency: concurrency) { _ in
            let request = try requests.request(path: "/xrpc/\(ThroughputCeiling.sourceNSID)", query: [("size", "\(size)")],
                                               method: .GET, lxm: ThroughputCeiling.sourceNSID)
            let response = try await benchHTTPClient.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: size + 1)
            // As fetchAsset does with what it receives.
            _ = SHA256.hash(data: body.readableBytesView)
            guard response.status == .ok, body.readableBytes == size else { throw ValidationError("source answered \(response.status)") }
        }
    }

    static func forEach<T: Sendable>(_ items: [T], concurrency: Int, _ body: @escaping @Sendable (T) async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            while next < min(concurrency, items.count) {
                let item = items[next]
                group.addTask { try await body(item) }
                next += 1
            }
            while try await group.next() != nil, next < items.count {
                let item = items[next]
                group.addTask { try await body(item) }
                next += 1
            }
            try await group.waitForAll()
        }
    }
}
