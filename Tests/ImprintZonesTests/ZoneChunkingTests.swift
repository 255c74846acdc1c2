import Foundation
@testable import ImprintZones
import ImprintTestSupport
import Testing

@Suite("Zone chunking")
struct ZoneChunkingTests {
    static let zone = "doc_chunks"

    static func payload(_ count: Int, _ rng: inout SplitMix64) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    static func roundTrip(_ payload: [UInt8], chunker: ZoneChunker, store: any ZoneStore, name: String) async throws -> PayloadChunks {
        let uploaded = try await chunker.upload(payload, to: store, zoneId: zone, baseName: name, recordType: "change",
                                                fields: ZoneRecordFields(convoId: "c", epoch: 3, seq: 9))
        #expect(uploaded.records.count == max(1, (payload.count + chunker.chunkSize - 1) / chunker.chunkSize))
        #expect(uploaded.records.allSatisfy { $0.asset.size <= chunker.chunkSize && $0.fields.seq == 9 && $0.fields.epoch == 3 })
        #expect(uploaded.payloadHash == SHA256Hex.digest(payload))
        // A reader finds the chunks in the feed, in any order, and reassembles them.
        let feed = try await drainChanges(store, zone)
        let mine = feed.records.filter { $0.recordName.hasPrefix(name + ".") }
        let group = try #require(PayloadChunks.group(mine)[uploaded.payloadHash])
        let chunks = try PayloadChunks(records: group.shuffled())
        #expect(chunks == uploaded)
        #expect(try await chunks.assemble(from: store, zoneId: zone) == payload)
        return chunks
    }

    @Test func boundarySizesAtTheDefaultChunkSize() async throws {
        let seed = testSeed("chunkBoundaries", fallback: 0xc4_0e_01)
        var rng = SplitMix64(seed: seed)
        let store = InMemoryZoneStore()
        _ = try await store.createZone(Self.zone)
        let chunker = try ZoneChunker()
        #expect(chunker.chunkSize == 1 << 20)
        for size in [0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1] {
            let chunks = try await Self.roundTrip(Self.payload(size, &rng), chunker: chunker, store: store, name: "p\(size)")
            #expect(chunks.size == size)
        }
    }

    @Test func seededRandomSizesAndChunkSizes() async throws {
        let seed = testSeed("chunkRandomSizes", fallback: 0xc4_0e_02)
        var rng = SplitMix64(seed: seed)
        let store = InMemoryZoneStore()
        _ = try await store.createZone(Self.zone)
        for round in 0..<40 {
            let chunker = try ZoneChunker(chunkSize: Int(rng.next() % 300) + 1)
            let size = Int(rng.next() % 3000)
            _ = try await Self.roundTrip(Self.payload(size, &rng), chunker: chunker, store: store, name: "r\(round)")
        }
    }

    @Test func anAsyncSequenceOfAnySizedPiecesIsRechunked() async throws {
        let seed = testSeed("chunkAsyncPieces", fallback: 0xc4_0e_03)
        var rng = SplitMix64(seed: seed)
        let store = InMemoryZoneStore()
        _ = try await store.createZone(Self.zone)
        let payload = Self.payload(10_000, &rng)
        var pieces: [[UInt8]] = []
        var offset = 0
        while offset < payload.count {
            let take = min(payload.count - offset, Int(rng.next() % 2500))
            pieces.append(Array(payload[offset..<(offset + take)]))
            offset += take
        }
        let stream = AsyncStream<[UInt8]> { continuation in
            for piece in pieces { continuation.yield(piece) }
            continuation.finish()
        }
        let chunker = try ZoneChunker(chunkSize: 1024)
        let uploaded = try await chunker.upload(stream, to: store, zoneId: Self.zone, baseName: "s", recordType: "attachment")
        #expect(uploaded.records.count == 10)
        #expect(uploaded.records.map(\.recordName) == (0..<10).map { "s.\($0)" })
        var streamed: [UInt8] = []
        for try await chunk in uploaded.chunks(from: store, zoneId: Self.zone) {
            #expect(chunk.count <= 1024)
            streamed += chunk
        }
        #expect(streamed == payload)
        // Uploading again (a retry) is a no-op.
        #expect(try await chunker.upload(payload, to: store, zoneId: Self.zone, baseName: "s", recordType: "attachment") == uploaded)
    }

    @Test func fileHandlesStreamInAndOut() async throws {
        let seed = testSeed("chunkFileHandles", fallback: 0xc4_0e_06)
        var rng = SplitMix64(seed: seed)
        let directory = TemporaryDirectory("zones-handles")
        let payload = Self.payload(5000, &rng)
        try Data(payload).write(to: URL(fileURLWithPath: directory.file("in")))
        let store = InMemoryZoneStore()
        _ = try await store.createZone(Self.zone)
        let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: directory.file("in")))
        try input.seek(toOffset: 1000) // from the handle's offset on
        let uploaded = try await ZoneChunker(chunkSize: 512).upload(from: input, to: store, zoneId: Self.zone, baseName: "h", recordType: "attachment")
        try input.close()
        #expect(uploaded.size == 4000 && uploaded.records.count == 8)
        #expect(FileManager.default.createFile(atPath: directory.file("out"), contents: nil))
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: directory.file("out")))
        try await uploaded.write(from: store, zoneId: Self.zone, to: output)
        try output.close()
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: directory.file("out")))) == Array(payload[1000...]))
    }

    @Test func missingDuplicatedAndAlteredChunksAreNamed() async throws {
        let seed = testSeed("chunkDamage", fallback: 0xc4_0e_04)
        var rng = SplitMix64(seed: seed)
        let store = InMemoryZoneStore()
        _ = try await store.createZone(Self.zone)
        let chunker = try ZoneChunker(chunkSize: 100)
        let uploaded = try await chunker.upload(Self.payload(450, &rng), to: store, zoneId: Self.zone, baseName: "p", recordType: "change")
        let records = uploaded.records

        // Missing: chunk 2 never arrived, or was deleted.
        let missing = await expectZoneError(.missingChunk) { try PayloadChunks(records: records.filter { $0.fields.chunkIndex != 2 }) }
        #expect(missing?.chunkIndex == 2)
        var tombstone = records[2]
        tombstone.deleted = true
        #expect((await expectZoneError(.missingChunk) { try PayloadChunks(records: records.filter { $0.recordName != "p.2" } + [tombstone]) })?.chunkIndex == 2)
        await expectZoneError(.missingChunk) { try PayloadChunks(records: []) }
        var vast = records[0]
        vast.fields.chunkCount = 1_000_000
        #expect((await expectZoneError(.missingChunk) { try PayloadChunks(records: [vast]) })?.chunkIndex == 1)

        // Duplicated: another record claims chunk 1; the same record twice is fine.
        var impostor = records[1]
        impostor.recordName = "p.1-bis"
        impostor.asset = ZoneAsset(of: [1])
        let duplicate = await expectZoneError(.duplicateChunk) { try PayloadChunks(records: records + [impostor]) }
        #expect(duplicate?.chunkIndex == 1 && duplicate?.recordName == "p.1-bis")
        #expect(try PayloadChunks(records: records + [records[1]]) == uploaded)

        // Inconsistent metadata or sizes.
        var wrongCount = records[3]
        wrongCount.fields.chunkCount = 9
        #expect((await expectZoneError(.inconsistentChunk) { try PayloadChunks(records: records.filter { $0.recordName != "p.3" } + [wrongCount]) })?.recordName == "p.3")
        var short = records
        short[2].asset.size = 50
        #expect((await expectZoneError(.inconsistentChunk) { try PayloadChunks(records: short) })?.chunkIndex == 2)

        // Altered: chunk 3 points at other (valid, same-size) bytes: the payload hash catches it.
        let other = try await store.uploadAsset(zoneId: Self.zone, bytes: Self.payload(100, &rng))
        var swapped = records
        swapped[3].asset = other
        let mismatch = await expectZoneError(.payloadHashMismatch) {
            try await PayloadChunks(records: swapped).assemble(from: store, zoneId: Self.zone)
        }
        #expect(mismatch != nil)
        // An asset that is gone names its chunk.
        var lost = records
        lost[4].asset = ZoneAsset(hash: String(repeating: "e", count: 64), size: 50)
        let gone = await expectZoneError(.assetNotFound) { try await PayloadChunks(records: lost).assemble(from: store, zoneId: Self.zone) }
        #expect(gone?.chunkIndex == 4 && gone?.recordName == "p.4")
    }

    @Test func alteredChunkBytesOnDiskAreNamed() async throws {
        let seed = testSeed("chunkBitFlip", fallback: 0xc4_0e_05)
        var rng = SplitMix64(seed: seed)
        let directory = TemporaryDirectory("zones-chunks")
        let store = try FolderZoneStore(root: directory.path, writer: "laptop")
        _ = try await store.createZone(Self.zone)
        let uploaded = try await ZoneChunker(chunkSize: 64).upload(Self.payload(300, &rng), to: store, zoneId: Self.zone, baseName: "p", recordType: "change")
        let path = FolderZoneLayout(root: directory.path).assetsPath(Self.zone, writer: "laptop") + "/" + uploaded.records[2].asset.hash
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[10] ^= 1
        try bytes.write(to: URL(fileURLWithPath: path))
        let error = await expectZoneError(.assetCorrupt) { try await uploaded.assemble(from: store, zoneId: Self.zone) }
        #expect(error?.recordName == "p.2" && error?.chunkIndex == 2)
    }

    @Test func badChunkSizesAreRefused() {
        #expect(throws: ZoneError.self) { try ZoneChunker(chunkSize: 0) }
        #expect(throws: ZoneError.self) { try ZoneChunker(chunkSize: ZoneLimits.maximumAssetBytes + 1) }
        #expect(throws: ZoneError.self) { try ZoneChunker(uploadsInFlight: 0) }
        #expect(throws: ZoneError.self) { try ZoneChunker(uploadsInFlight: 17) }
    }

    /// Uploads overlap up to `uploadsInFlight` and no further, finish in any order, and the
    /// chunk records still name the chunks in payload order; the records are saved only once
    /// every upload was answered.
    @Test(arguments: [1, 3])
    func uploadsOverlapUpToTheLimitAndKeepTheirOrder(_ inFlight: Int) async throws {
        let seed = testSeed("chunkInFlight", fallback: 0xc4_0e_07)
        var rng = SplitMix64(seed: seed)
        let base = InMemoryZoneStore()
        _ = try await base.createZone(Self.zone)
        let store = OverlapCountingZoneStore(base, barrier: inFlight, yields: (0..<11).map { _ in Int(rng.next() % 5) })
        let payload = Self.payload(10 * 100 + 37, &rng)
        let uploaded = try await ZoneChunker(chunkSize: 100, uploadsInFlight: inFlight)
            .upload(payload, to: store, zoneId: Self.zone, baseName: "o", recordType: "attachment")
        #expect(await store.mostInFlight == inFlight)
        #expect(await store.uploadsAnsweredBeforeSave == 11)
        #expect(uploaded.records.map(\.recordName) == (0..<11).map { "o.\($0)" })
        #expect(uploaded.records.map(\.asset) == (0..<11).map { ZoneAsset(of: payload[($0 * 100)..<min(payload.count, $0 * 100 + 100)]) })
        #expect(try await uploaded.assemble(from: base, zoneId: Self.zone) == payload)
    }

    /// A ~200 MB attachment through a folder store and back, in a child process whose peak
    /// resident set must stay far below the payload's size.
    @Test func hundredsOfMegabytesStreamInBoundedMemory() async throws {
        let directory = TemporaryDirectory("zones-stream")
        let executable = try #require(Self.helperExecutable(), "build imprint-zones-testhelper first (swift build --build-tests)")
        let mebibytes = 200
        let run = try await ChildProcess.run(executable, ["stream", directory.path, String(mebibytes), String(testSeed("streamedChunking", fallback: 0x200))])
        #expect(run.status == 0, "\(run.stderrText)")
        let data = run.stdout
        struct Report: Decodable { var bytes: Int; var chunks: Int; var identical: Bool; var peakRSSBytes: Int }
        let report = try JSONDecoder().decode(Report.self, from: data)
        print("streamed \(report.bytes) bytes in \(report.chunks) chunks, peak RSS \(report.peakRSSBytes / (1 << 20)) MiB")
        #expect(report.bytes == mebibytes << 20 && report.chunks == mebibytes && report.identical)
        #expect(report.peakRSSBytes > 0)
        #expect(report.peakRSSBytes < 96 << 20, "peak RSS \(report.peakRSSBytes) bytes for a \(mebibytes) MiB payload")
    }

    /// The helper built next to the test binary (or a directory or two above it).
    static func helperExecutable() -> String? {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        var directory = (exe as NSString).deletingLastPathComponent
        for _ in 0..<3 {
            let candidate = directory + "/imprint-zones-testhelper"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = (directory as NSString).deletingLastPathComponent
        }
        return nil
    }
}
