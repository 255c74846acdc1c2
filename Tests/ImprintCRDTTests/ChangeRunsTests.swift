import Testing
@testable import ImprintCRDT
import ImprintTestSupport

/// Version 5 stores the change headers as runs of one actor's consecutive changes
/// (`ChangeRuns`, `docs/format.md`, "Change runs"): the same history as versions 1 and 3,
/// fewer bytes, and every hostile run refused with a `CRDTError` before anything is
/// allocated for what it declares.
@Suite struct ChangeRunsTests {
    /// Three actors typing, mostly in turns of several changes each (runs), sometimes
    /// concurrently (a run then starts with several dependencies), some changes with a
    /// message, one change holding no op of its actor's next counters (a merge in between).
    static func history(seed: UInt64) throws -> (doc: Document, text: ObjectID) {
        var rng = SplitMix64(seed: seed)
        let docs = ["a1", "b2", "c3"].map { Document(actor: ActorID(hex: $0 + $0)!) }
        let t = try docs[0].change { tx in try tx.put(.root, "t", .text)! }
        for d in docs.dropFirst() { try d.apply(docs[0].allChanges()) }
        for turn in 0..<24 {
            let d = docs[Int.random(in: 0..<3, using: &rng)]
            for k in 0..<Int.random(in: 1...6, using: &rng) {
                let message: String? = k == 2 && turn % 3 == 0 ? "turn \(turn)" : nil
                try d.change(message: message) { tx in
                    let len = try d.length(t)
                    try tx.splice(t, at: Int.random(in: 0...len, using: &rng), insert: ["x", "é", "😀", "ab"][k % 4])
                    if len > 3, k % 3 == 1 { try tx.splice(t, at: 1, delete: 1) }
                }
                d.sealAll()
            }
            // Usually everyone catches up; sometimes one replica misses a turn (concurrency).
            for other in docs where other !== d && Int.random(in: 0..<4, using: &rng) > 0 {
                try other.apply(d.allChanges())
            }
        }
        for d in docs.dropFirst() { try docs[0].apply(d.allChanges()) }
        return (docs[0], t)
    }

    /// The run count a version 5 payload declares.
    static func runCount(_ payload: [UInt8]) throws -> (changes: Int, runs: Int) {
        var r = ByteReader(payload)
        _ = try Document().decodeActorTable(&r)
        return (try r.count(max: Int.max), try r.count(max: Int.max))
    }

    /// A version 5 payload with its change-run section replaced by one of the given counts and
    /// raw columns (the other sections kept).
    static func replacingRuns(in payload: [UInt8], changes: UInt64, runs: UInt64, columns: [[UInt8]]) throws -> [UInt8] {
        var r = ByteReader(payload)
        _ = try Document().decodeActorTable(&r)
        let start = r.offset
        try ChangeRuns.skip(&r, budget: DocumentFormat.maxPayload)
        var w = ByteWriter()
        w.raw(payload[..<start])
        w.uleb(changes)
        w.uleb(runs)
        for c in columns {
            w.uleb(c.count)
            w.byte(0)
            w.lengthPrefixed(c)
        }
        w.raw(payload[r.offset...])
        return w.bytes
    }

    @Test func runsHoldTheSameHistoryAsOneHeaderPerChange() throws {
        let seed = testSeed("ChangeRunsTests.sameHistory", fallback: 0x5EED_0501)
        for round in UInt64(0)..<6 {
            let (d, t) = try Self.history(seed: seed &+ round)
            let v5 = d.save()
            #expect(v5[4] == DocumentFormat.runVersion)
            let v3 = d.save(visibleTextFirst: true, runHeaders: false)
            #expect(v3[4] == DocumentFormat.readableVersion)
            let counts = try Self.runCount(try DocumentFormat.unframe(v5))
            #expect(counts.changes == d.records.count)
            #expect(counts.runs < counts.changes, "seed \(seed &+ round): runs join changes")
            #expect(v5.count < v3.count, "seed \(seed &+ round): \(v5.count) vs \(v3.count) bytes")
            // Loaded as the writer (another actor would be interned into the actor table).
            let fromRuns = try Document.load(v5, actor: d.actor)
            #expect(fromRuns.deferredLoad != nil, "version 5 opens for reading")
            #expect(try fromRuns.text(t) == d.text(t))
            let fromColumns = try Document.load(v3)
            #expect(fromRuns.allChanges().map(\.hash) == d.allChanges().map(\.hash))
            #expect(fromRuns.allChanges().map(\.message) == d.allChanges().map(\.message))
            #expect(fromRuns.currentHeads == fromColumns.currentHeads)
            #expect(fromRuns.currentHeads == d.currentHeads)
            let middle = Array(d.allChanges().prefix(d.records.count / 2))
            let half = Document()
            try half.apply(middle)
            #expect(fromRuns.changes(since: half.currentHeads).map(\.hash) == d.changes(since: half.currentHeads).map(\.hash))
            #expect(DecoderFuzzTests.brokenPromises(fromRuns).isEmpty)
            // Saved again, the same bytes; the old layout of the reloaded document is too.
            #expect(fromRuns.save() == v5)
            #expect(try Document.load(v5, actor: d.actor).save(visibleTextFirst: true, runHeaders: false) == v3)
        }
    }

    @Test func anEmptyDocumentHasNoRuns() throws {
        let d = Document()
        let saved = d.save()
        let counts = try Self.runCount(try DocumentFormat.unframe(saved))
        #expect(counts.changes == 0 && counts.runs == 0)
        let loaded = try Document.load(saved)
        try loaded.finishLoading()
        #expect(loaded.allChanges().isEmpty)
    }

    /// Runs declaring 2^40 changes, or more changes than their columns hold: refused with a
    /// typed error, before anything is reserved for the declared counts.
    @Test func hugeDeclaredRunsAreRefusedBeforeAllocating() throws {
        let (d, _) = try DeclaredCountTests.history(changes: 6)
        let payload = try DocumentFormat.unframe(d.save())
        let (changes, _) = try Self.runCount(payload)
        func leb(_ values: [UInt64]) -> [UInt8] {
            var w = ByteWriter()
            for v in values { w.uleb(v) }
            return w.bytes
        }
        func sleb(_ values: [Int64]) -> [UInt8] {
            var w = ByteWriter()
            for v in values { w.sleb(v) }
            return w.bytes
        }
        let huge: UInt64 = 1 << 40
        let n = UInt64(changes)
        let cases: [(changes: UInt64, runs: UInt64, columns: [[UInt8]])] = [
            // One run of 2^40 changes.
            (n, 1, [leb([0]), leb([huge]), sleb([1]), leb([0]), leb(Array(repeating: 1, count: changes)), sleb(Array(repeating: 0, count: changes)), []]),
            // 2^40 changes declared in all.
            (huge, 1, [leb([0]), leb([huge]), sleb([1]), leb([0]), leb([1]), sleb([0]), []]),
            // 2^20 changes in one run, the per-change columns holding one.
            (1 << 20, 1, [leb([0]), leb([1 << 20]), sleb([1]), leb([0]), leb([1]), sleb([0]), []]),
            // 2^40 runs.
            (n, huge, [leb([0]), leb([n]), sleb([1]), leb([0]), leb(Array(repeating: 1, count: changes)), sleb(Array(repeating: 0, count: changes)), []]),
            // A run of none.
            (n, 2, [leb([0, 0]), leb([0, n]), sleb([1, 0]), leb([0, 0]), leb(Array(repeating: 1, count: changes)), sleb(Array(repeating: 0, count: changes)), []]),
            // A message of a change past the last.
            (n, 1, [leb([0]), leb([n]), sleb([1]), leb([0]), leb(Array(repeating: 1, count: changes)), sleb(Array(repeating: 0, count: changes)), leb([n]) + [1, 0x41]]),
            // A run's first change depending on a change 2^40 back.
            (n, 1, [leb([0]), leb([n]), sleb([1]), leb([1, huge]), leb(Array(repeating: 1, count: changes)), sleb(Array(repeating: 0, count: changes)), []]),
        ]
        for (k, c) in cases.enumerated() {
            let m = try Self.replacingRuns(in: payload, changes: c.changes, runs: c.runs, columns: c.columns)
            for compress in [false, true] {
                do {
                    try Document.load(DocumentFormat.frame(m, version: DocumentFormat.runVersion, compress: compress)).finishLoading()
                    Issue.record("case \(k) loaded")
                } catch let e as CRDTError {
                    #expect([.malformed, .tooLarge, .truncated].contains(e.code), "case \(k): \(e)")
                }
            }
        }
    }

    /// Mutated change-run sections behind valid checksums: each loads or throws
    /// `CRDTError`, never crashes, and one that loads keeps every promise.
    @Test func mutatedRunSectionsNeverCrash() throws {
        let seed = testSeed("ChangeRunsTests.mutatedRunSections", fallback: 0x5EED_0502)
        var rng = SplitMix64(seed: seed)
        let (d, _) = try Self.history(seed: seed)
        let payload = try DocumentFormat.unframe(d.save())
        var r = ByteReader(payload)
        _ = try Document().decodeActorTable(&r)
        let start = r.offset
        try ChangeRuns.skip(&r, budget: DocumentFormat.maxPayload)
        let end = r.offset
        var loaded = 0, refused = 0
        for round in 0..<600 {
            var m = payload
            for _ in 0...(round % 3) {
                let i = Int.random(in: start..<end, using: &rng)
                if round % 2 == 0 {
                    m[i] ^= UInt8.random(in: 1...255, using: &rng)
                } else {
                    m[i] = [0x00, 0x01, 0x7F, 0x80, 0xFF][Int.random(in: 0..<5, using: &rng)]
                }
            }
            let bytes = DocumentFormat.frame(m, version: DocumentFormat.runVersion, compress: round % 4 == 0)
            if DecoderFuzzTests.loadsKeepingPromises(bytes, "seed \(seed) round \(round)") { loaded += 1 } else { refused += 1 }
        }
        print("ChangeRunsTests: seed \(seed): \(loaded) mutated run sections loaded and kept every promise, \(refused) refused")
    }
}
