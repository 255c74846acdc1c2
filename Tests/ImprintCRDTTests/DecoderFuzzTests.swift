import Testing
@testable import ImprintCRDT
import ImprintTestSupport

/// Truncated, bit-flipped and random inputs to every decoder: each must return or throw
/// `CRDTError`, never crash, and a document that does load must stay usable.
@Suite struct DecoderFuzzTests {
    static func sampleDocument(seed: UInt64) throws -> Document {
        var rng = SplitMix64(seed: seed)
        let a = Document(actor: ActorID(hex: "a1a1")!)
        let b = Document(actor: ActorID(hex: "b2b2")!)
        let (t, l, m) = try a.change { tx in
            (try tx.put(.root, "t", .text)!, try tx.put(.root, "l", .list)!, try tx.put(.root, "m", .map)!)
        }
        try b.apply(a.allChanges())
        for d in [a, b] {
            for i in 0..<12 {
                try d.change { tx in
                    let len = try d.length(t)
                    try tx.splice(t, at: Int.random(in: 0...len, using: &rng), insert: ["ab", "é", "😀x", "z"][i % 4])
                    if len > 2 { try tx.splice(t, at: 1, delete: 1) }
                    try tx.insert(l, at: 0, .scalar(.double(Double(i))))
                    try tx.put(m, "k\(i % 3)", .scalar(.bytes([UInt8(i)])))
                    try tx.put(.root, "c", .scalar(.counter(Int64(i))))
                }
            }
        }
        try a.apply(b.allChanges())
        return a
    }

    /// What a document that loaded (or took a change) must then be able to do, as a list of
    /// broken promises (empty when it keeps them all): be read, be saved, load again from
    /// what it saved into the same bytes, heads and values, and replay its own history into
    /// the same values in a fresh document. A decoder that lets inconsistent tables through
    /// fails here even when nothing crashes.
    /// Whether two document values are the same, numbers compared bit for bit: a mutated
    /// payload may hold a NaN scalar (a value documents allow), which `==` never equals.
    static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.number(let x), .number(let y)): return x.bitPattern == y.bitPattern
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.allSatisfy { key, v in y[key].map { same(v, $0) } ?? false }
        default: return a == b
        }
    }

    static func brokenPromises(_ d: Document) -> [String] {
        var broken: [String] = []
        let value: JSONValue
        do {
            value = try d.jsonValue()
        } catch {
            return ["loaded but cannot be read: \(error)"]
        }
        let saved = d.save()
        do {
            let again = try Document.load(saved, actor: d.actor)  // the own actor is saved too
            if again.save() != saved { broken.append("save → load → save gives other bytes") }
            if again.currentHeads != d.currentHeads { broken.append("heads differ after save → load") }
            if !Self.same(try again.jsonValue(), value) { broken.append("values differ after save → load") }
        } catch {
            broken.append("its own save does not load: \(error)")
        }
        do {
            let replayed = Document()
            try replayed.apply(d.allChanges())
            if replayed.pendingChangeCount != 0 { broken.append("its history has \(replayed.pendingChangeCount) changes with missing dependencies") }
            if !Self.same(try replayed.jsonValue(), value) { broken.append("its history replays into other values") }
        } catch {
            broken.append("its history does not replay: \(error)")
        }
        return broken
    }

    /// One random mutation of `m`: kind 0 changes a byte, 1 truncates, 2 inserts 1–8 random bytes.
    /// Loads (mutated) document bytes in full: true if they load, recording an issue unless
    /// the document keeps every promise; false if refused with a `CRDTError`, recording an
    /// issue for any other error. `context` names the case in issues (seed and round).
    static func loadsKeepingPromises(_ bytes: [UInt8], _ context: String) -> Bool {
        do {
            let d = try Document.load(bytes)
            try d.finishLoading()
            let broken = brokenPromises(d)
            if !broken.isEmpty { Issue.record("\(context): \(broken)") }
            return true
        } catch is CRDTError {
            return false
        } catch {
            Issue.record("\(context): untyped error \(error)")
            return false
        }
    }

    static func mutate(_ m: inout [UInt8], kind: Int, using rng: inout SplitMix64) {
        switch kind {
        case 0:
            let i = Int.random(in: 0..<m.count, using: &rng)
            m[i] ^= UInt8.random(in: 1...255, using: &rng)
        case 1:
            m = Array(m.prefix(Int.random(in: 0..<m.count, using: &rng)))
        default:
            let i = Int.random(in: 0..<m.count, using: &rng)
            m.insert(contentsOf: (0..<Int.random(in: 1...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }, at: i)
        }
    }

    @Test func truncatedDocumentsThrow() throws {
        let bytes = try Self.sampleDocument(seed: 1).save()
        for n in 0..<bytes.count {
            #expect(throws: CRDTError.self, "prefix \(n) of \(bytes.count)") { try Document.load(Array(bytes.prefix(n))) }
        }
    }

    @Test func bitFlipsAreCaughtByTheChecksum() throws {
        let bytes = try Self.sampleDocument(seed: 2).save()
        var rng = SplitMix64(seed: 0xF11F)
        for _ in 0..<500 {
            var m = bytes
            let i = Int.random(in: 0..<m.count, using: &rng)
            m[i] ^= UInt8(1 << Int.random(in: 0..<8, using: &rng))
            #expect(throws: CRDTError.self, "flip at \(i)") { try Document.load(m) }
        }
    }

    @Test func mutatedPayloadsBehindAValidChecksumNeverCrash() throws {
        let seed: UInt64 = 0x5EED_0003
        var rng = SplitMix64(seed: seed)
        let doc = try Self.sampleDocument(seed: 3)
        // The current layout (version 5, history deferred) and the old ones (versions 3 and 1).
        let layouts = [
            (try DocumentFormat.unframe(doc.save()), DocumentFormat.runVersion),
            (try DocumentFormat.unframe(doc.save(visibleTextFirst: false)), DocumentFormat.version),
            (try DocumentFormat.unframe(doc.save(visibleTextFirst: true, runHeaders: false)), DocumentFormat.readableVersion),
        ]
        var loaded = 0, refused = 0, truncationsRefused = 0
        for round in 0..<3000 {
            let (payload, version) = layouts[round / 4 % layouts.count]
            var m = payload
            if round % 4 == 3 {
                for _ in 0..<4 {
                    let i = Int.random(in: 0..<m.count, using: &rng)
                    m[i] = [0x00, 0x7F, 0x80, 0xFF][Int.random(in: 0..<4, using: &rng)]
                }
            } else {
                Self.mutate(&m, kind: round % 4, using: &rng)
            }
            do {
                let d = try Document.load(DocumentFormat.frame(m, version: version, compress: round % 2 == 0))
                // What a deferred load answers before the history is decoded must not crash.
                if case .object(let t, .text)? = try? d.get(.root, "t") { _ = try? d.text(t) }
                _ = try? d.keys(.root)
                try d.finishLoading()
                loaded += 1
                let broken = Self.brokenPromises(d)
                if !broken.isEmpty { Issue.record("seed \(seed) round \(round): loaded a mutated payload that \(broken)") }
            } catch is CRDTError {
                refused += 1
                if round % 4 == 1 { truncationsRefused += 1 }
            } catch {
                Issue.record("seed \(seed) round \(round): untyped error \(error)")
            }
        }
        // Every fourth round truncates the payload: a truncated payload is never a document.
        #expect(truncationsRefused == 750, "seed \(seed): \(750 - truncationsRefused) truncated payloads loaded")
        print("DecoderFuzzTests (CRDT): seed \(seed): \(loaded) mutated payloads loaded and kept every promise, \(refused) refused")
    }

    @Test func mutatedChangesNeverCrash() throws {
        let seed: UInt64 = 0x5EED_0004
        var rng = SplitMix64(seed: seed)
        let doc = try Self.sampleDocument(seed: 4)
        let changes = doc.allChanges()
        var accepted = 0
        for round in 0..<3000 {
            var m = changes[round % changes.count].bytes
            let i = Int.random(in: 0..<m.count, using: &rng)
            if round % 3 == 0 {
                m = Array(m.prefix(i))
            } else {
                m[i] ^= UInt8.random(in: 1...255, using: &rng)
            }
            let c: Change
            do {
                c = try Change(bytes: m)
            } catch is CRDTError {
                continue
            } catch {
                Issue.record("seed \(seed) round \(round): untyped error \(error)")
                continue
            }
            // The others apply as they are (the mutated one's dependants wait for it); then
            // the mutated change either applies, leaving a document that keeps its promises,
            // or throws a typed error and leaves the document as it was.
            let fresh = Document()
            do {
                try fresh.apply(changes.filter { $0.hash != changes[round % changes.count].hash })
                let before = fresh.save(), heads = fresh.currentHeads
                do {
                    try fresh.apply(c)
                    accepted += 1
                } catch is CRDTError {
                    if fresh.save() != before || fresh.currentHeads != heads {
                        Issue.record("seed \(seed) round \(round): a refused change altered the document")
                    }
                }
                let broken = Self.brokenPromises(fresh)
                if !broken.isEmpty { Issue.record("seed \(seed) round \(round): after a mutated change the document \(broken)") }
            } catch {
                Issue.record("seed \(seed) round \(round): \(error)")
            }
        }
        print("DecoderFuzzTests (CRDT): seed \(seed): \(accepted) mutated changes applied and kept every promise")
    }

    @Test func randomBytesAreRejected() throws {
        var rng = SplitMix64(seed: 0x5EED_0005)
        for n in 0..<400 {
            var bytes = (0..<(n % 97)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if n % 3 == 0 && bytes.count >= 4 { bytes.replaceSubrange(0..<4, with: Array("IMPD".utf8)) }
            if n % 3 == 1 && bytes.count >= 4 { bytes.replaceSubrange(0..<4, with: Array("IMPI".utf8)) }
            #expect(throws: CRDTError.self) { try Document.load(bytes) }
            #expect(throws: CRDTError.self) { try Change(bytes: bytes) }
        }
    }

    @Test func hugeDeclaredSizesDoNotAllocate() throws {
        // A header declaring a 1 GiB payload backed by a few bytes must fail fast.
        var w = ByteWriter()
        w.uleb(1 << 30)
        w.uleb(4)
        w.raw([0x28, 0xB5, 0x2F, 0xFD])
        var framed = DocumentFormat.magic + [DocumentFormat.version, 1]
        framed += SHA256Digest.of(w.bytes).prefix(8)
        framed += w.bytes
        #expect(throws: CRDTError.self) { try Document.load(framed) }
    }
}
