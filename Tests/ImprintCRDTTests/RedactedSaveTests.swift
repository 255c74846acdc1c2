import EditingTraces
import Foundation
import ImprintEncoding
import Testing
@testable import ImprintCRDT
import ImprintTestSupport

/// Redacted saves (`save(history: .redacted)`, format version 4): no byte of deleted text,
/// the same reads, and merging with every change made before, after or concurrently with
/// the save exactly as a full copy does.
///
/// `IMPRINT_TEST_SEED` moves the randomised cases to other histories (case `c` uses seed + c).
@Suite struct RedactedSaveTests {
    static let marker = "SECRET-MARKER-7f3a"
    static let listMarker = "LIST-SECRET-91c2"

    /// A document whose text once held `marker` (deleted since), with marks, a map, a list
    /// and a counter; the list once held `listMarker` (deleted since, by the same changes);
    /// the text ends as "keep this, and this".
    static func documentWithDeletedSecret() throws -> (Document, text: ObjectID) {
        let d = Document(actor: .named("author"))
        d.coalescesLocalChanges = false
        let (t, l, m) = try d.change { tx in
            (try tx.put(.root, "t", .text)!, try tx.put(.root, "l", .list)!, try tx.put(.root, "m", .map)!)
        }
        try d.change { tx in
            try tx.splice(t, at: 0, insert: "keep this, " + marker + " and this")
            _ = try tx.insert(l, at: 0, .scalar(.string(listMarker)))
        }
        try d.change { tx in
            try tx.mark(t, 0..<4, "bold")
            try tx.put(m, "k", "v1")
            try tx.put(.root, "c", .scalar(.counter(1)))
            _ = try tx.insert(l, at: 0, "item")
        }
        try d.change { tx in
            try tx.splice(t, at: 11, delete: marker.count + 1)
            try tx.delete(l, at: 1)  // ["item", listMarker]
        }
        try d.change { tx in
            try tx.increment(.root, "c", by: 4)
            try tx.put(m, "k", "v2")
        }
        #expect(try d.text(t) == "keep this, and this")
        return (d, t)
    }

    static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let n = Array(needle.utf8)
        guard haystack.count >= n.count else { return false }
        return (0...(haystack.count - n.count)).contains { haystack[$0..<$0 + n.count].elementsEqual(n) }
    }

    @Test func aRedactedSaveHoldsNoByteOfDeletedText() throws {
        let (d, _) = try Self.documentWithDeletedSecret()
        // The full save keeps it (in its raw columns: they may be compressed).
        var fullColumns: [UInt8] = []
        _ = d.encodePayload(statistics: { _, bytes in fullColumns += bytes })
        #expect(Self.contains(fullColumns, Self.marker))
        #expect(Self.contains(fullColumns, Self.listMarker))
        var redactedColumns: [UInt8] = []
        let hashes = d.ownersOfDeletedContent().map { i -> (record: Int, hash: ChangeHash) in
            d.seal(i)
            return (i, d.records[i].hash!)
        }
        _ = d.encodePayload(redacted: hashes, statistics: { _, bytes in redactedColumns += bytes })
        let saved = try d.save(history: .redacted)
        let payload = try DocumentFormat.unframe(saved)
        for part in ["SECRET", "MARKER", "7f3a", "T-M", "LIST", "91c2"] {
            #expect(!Self.contains(saved, part), "framed bytes hold \(part)")
            #expect(!Self.contains(payload, part), "payload holds \(part)")
            #expect(!Self.contains(redactedColumns, part), "raw columns hold \(part)")
        }
        #expect(saved[4] == DocumentFormat.redactedVersion)
    }

    @Test func aRedactedSaveLoadsIntoTheSameStateAndHistoryShape() throws {
        let (d, t) = try Self.documentWithDeletedSecret()
        let saved = try d.save(history: .redacted)
        let r = try Document.load(saved)
        #expect(r.hasRedactedHistory)
        #expect(!d.hasRedactedHistory)
        #expect(try r.jsonValue() == d.jsonValue())
        #expect(try r.spans(t) == d.spans(t))
        #expect(r.currentHeads == d.currentHeads)
        for c in d.allChanges() { #expect(r.contains(c.hash)) }
        #expect(r.changeHashes == d.changeHashes)
        #expect(d.changeHashes == d.allChanges().map(\.hash))
        // Only the change that inserted the deleted text is redacted; the rest is sent as is.
        let full = Set(d.allChanges().map(\.hash))
        let sent = r.allChanges()
        #expect(sent.count == full.count - 1)
        #expect(Set(sent.map(\.hash)).isSubset(of: full))
        // What it sends is the original changes, byte for byte.
        let originals = Dictionary(uniqueKeysWithValues: d.allChanges().map { ($0.hash, $0.bytes) })
        #expect(sent.allSatisfy { originals[$0.hash] == $0.bytes })
        #expect(r.changes(since: []).count == sent.count)
        // No full save from it; its own save is redacted again, byte for byte stable.
        #expect(throws: CRDTError(.redactedHistory, "the document holds redacted changes: it cannot write a full save")) {
            try r.save(history: .full)
        }
        let again = r.save()
        #expect(again[4] == DocumentFormat.redactedVersion)
        #expect(try Document.load(again, actor: r.actor).save() == again)
        #expect(try r.save(history: .redacted) == again)
        // Old versions read with each redacted character as the placeholder.
        let before = d.allChanges()[1].hash
        let original = try d.text(t, at: [before])
        let shown = try r.text(t, at: [before])
        #expect(original.contains(Self.marker))
        #expect(shown == original.replacingOccurrences(of: Self.marker + " ", with: String(repeating: "\u{1A}", count: Self.marker.count + 1)))
        // A fork stays redacted: it never hands out placeholder content either.
        let fork = try r.fork(at: [before])
        #expect(fork.hasRedactedHistory)
        #expect(fork.allChanges().count == 1)
        #expect(throws: CRDTError.self) { try fork.save(history: .full) }
        #expect(try Document.load(fork.save()).text(t) == shown)
        // A full document without deletions writes an ordinary save's content.
        let plain = Document()
        try plain.change { tx in _ = try tx.put(.root, "x", 1) }
        #expect(try !Document.load(try plain.save(history: .redacted)).hasRedactedHistory)
        #expect(try Document.load(try plain.save(history: .full)).jsonValue() == plain.jsonValue())
    }

    @Test func documentsOfEarlierVersionsStillLoad() throws {
        let (d, t) = try Self.documentWithDeletedSecret()
        for bytes in [d.save(), d.save(visibleTextFirst: false)] {
            let l = try Document.load(bytes)
            #expect(!l.hasRedactedHistory)
            #expect(try l.spans(t) == d.spans(t))
            #expect(l.allChanges().count == d.allChanges().count)
        }
    }

    @Test func merging() throws {
        let (d, t) = try Self.documentWithDeletedSecret()
        let r = try Document.load(try d.save(history: .redacted), actor: .named("joiner"))
        // Into an empty document: the redacted state is adopted as it is.
        let empty = Document()
        try empty.merge(r)
        #expect(empty.hasRedactedHistory)
        #expect(try empty.text(t) == d.text(t))
        // The joiner's edit reaches the author, and the author's reaches the joiner.
        try r.change { tx in try tx.splice(t, at: 0, insert: ">") }
        try d.change { tx in try tx.splice(t, at: try d.length(t), insert: "<") }
        try d.apply(r.changes(since: d.currentHeads))
        try r.apply(d.allChanges())
        #expect(d.pendingChangeCount == 0 && r.pendingChangeCount == 0)
        #expect(try r.text(t) == ">keep this, and this<")
        #expect(try d.text(t) == r.text(t))
        #expect(Set(d.currentHeads) == Set(r.currentHeads))
        // A redacted save followed by an incremental chunk loads as one file.
        let base = r.save()
        try r.change { tx in try tx.splice(t, at: 1, insert: "+") }
        let file = try Document.load(base + r.saveIncremental())
        #expect(try file.text(t) == r.text(t))
        #expect(file.hasRedactedHistory && Set(file.currentHeads) == Set(r.currentHeads))
        // Merging the redacted copy into the full one adds what it can send.
        try d.merge(r)
        #expect(d.pendingChangeCount == 0)
        #expect(try d.text(t) == r.text(t))
        // Sync between them converges without the redacted change being sent.
        var sd = SyncState(), sr = SyncState()
        try d.change { tx in try tx.splice(t, at: 1, insert: "1") }
        try r.change { tx in try tx.splice(t, at: 2, insert: "2") }
        _ = try syncRounds(d, &sd, r, &sr)
        #expect(try d.text(t) == r.text(t))
    }

    // MARK: Random concurrent histories

    static func randomEdit(_ doc: Document, _ t: ObjectID, _ m: ObjectID, _ l: ObjectID, _ rng: inout SplitMix64) throws {
        let alphabet = Array("abcdefé😀 ")
        try doc.change { tx in
            let len = try doc.length(t), listLength = try doc.length(l)
            switch Int.random(in: 0..<12, using: &rng) {
            case 0..<4:
                let s = String((0..<Int.random(in: 1...5, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
                try tx.splice(t, at: Int.random(in: 0...len, using: &rng), insert: s)
            case 4..<7 where len > 0:
                let at = Int.random(in: 0..<len, using: &rng)
                try tx.splice(t, at: at, delete: Int.random(in: 1...min(4, len - at), using: &rng))
            case 7 where len > 1:
                let a = Int.random(in: 0..<len - 1, using: &rng)
                try tx.mark(t, a..<Int.random(in: a + 1...len, using: &rng), ["bold", "em"].randomElement(using: &rng)!)
            case 10:
                _ = try tx.insert(l, at: Int.random(in: 0...listLength, using: &rng), .scalar(.string("item")))
            case 11 where listLength > 0:
                try tx.delete(l, at: Int.random(in: 0..<listLength, using: &rng))
            case 8:
                try tx.put(m, ["a", "b", "c"].randomElement(using: &rng)!, .scalar(.int(Int64.random(in: 0...99, using: &rng))))
            default:
                try tx.increment(.root, "n", by: Int64.random(in: -3...3, using: &rng))
            }
        }
    }

    /// What a replica reads: its values and the text with its marks.
    struct Reads: Equatable, CustomStringConvertible {
        var value: JSONValue
        var spans: [TextSpan]
        var description: String { "\(spans)" }
    }

    static func reads(_ d: Document, _ t: ObjectID) throws -> Reads {
        Reads(value: try d.jsonValue(), spans: try d.spans(t))
    }

    @Test func aRedactedCopyMergesAsAFullCopyDoes() throws {
        let base = testSeed("RedactedSaveTests.aRedactedCopyMergesAsAFullCopyDoes (60 cases)", fallback: 0x4ED_AC7)
        for c in 0..<60 {
            let seed = base &+ UInt64(c)
            do {
                try Self.runCase(seed: seed)
            } catch {
                Issue.record("case failed with seed \(seed) (replay with IMPRINT_TEST_SEED=\(seed)): \(error)")
            }
        }
    }

    struct Mismatch: Error, CustomStringConvertible { var description: String }

    static func runCase(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let names = ["a", "b", "c"].map { ActorID.named($0 + "\(seed % 1000)") }
        let replicas = names.map { Document(actor: $0) }
        let a = replicas[0]
        let (t, m, l) = try a.change { tx in
            let t = try tx.put(.root, "t", .text)!
            _ = try tx.put(.root, "n", .scalar(.counter(0)))
            return (t, try tx.put(.root, "m", .map)!, try tx.put(.root, "l", .list)!)
        }
        for r in replicas.dropFirst() { try r.apply(a.allChanges()) }
        for r in replicas { r.coalescesLocalChanges = Bool.random(using: &rng) }
        func exchange(_ from: Document, _ to: Document) throws {
            try to.apply(from.changes(since: to.currentHeads))
        }
        // Concurrent history before the save, with partial syncs.
        for _ in 0..<Int.random(in: 2...6, using: &rng) {
            for r in replicas {
                for _ in 0..<Int.random(in: 0...5, using: &rng) { try randomEdit(r, t, m, l, &rng) }
            }
            let i = Int.random(in: 0..<3, using: &rng), j = Int.random(in: 0..<3, using: &rng)
            if i != j { try exchange(replicas[i], replicas[j]) }
        }
        let savedHeads = a.currentHeads
        let d = try Document.load(try a.save(history: .redacted), actor: .named("d\(seed % 1000)"))
        let f = try Document.load(a.save(), actor: .named("f\(seed % 1000)"))
        func check(_ step: String) throws {
            let rd = try reads(d, t), rf = try reads(f, t)
            guard rd == rf else { throw Mismatch(description: "\(step): redacted \(rd) vs full \(rf)") }
            guard Set(d.currentHeads) == Set(f.currentHeads), d.pendingChangeCount == f.pendingChangeCount else {
                throw Mismatch(description: "\(step): heads or pending differ")
            }
        }
        try check("after load")
        // An old version reads as in the full copy but for placeholders.
        let old = try d.text(t, at: savedHeads), oldFull = try f.text(t, at: savedHeads)
        guard old.unicodeScalars.count == oldFull.unicodeScalars.count else { throw Mismatch(description: "old version length") }
        // After the save: the others' concurrent and later changes reach both copies in the
        // same order; the redacted copy edits too (its changes go to the full copy and on).
        for step in 0..<Int.random(in: 3...8, using: &rng) {
            for r in replicas {
                for _ in 0..<Int.random(in: 0...4, using: &rng) { try randomEdit(r, t, m, l, &rng) }
            }
            if Bool.random(using: &rng) {
                try randomEdit(d, t, m, l, &rng)
                let mine = d.changes(since: f.currentHeads)
                try f.apply(mine)
                try replicas[Int.random(in: 0..<3, using: &rng)].apply(mine)
            }
            let src = replicas[Int.random(in: 0..<3, using: &rng)]
            let batch = src.changes(since: savedHeads).shuffled(using: &rng)
            try d.apply(batch)
            try f.apply(batch)
            try check("step \(step)")
            let i = Int.random(in: 0..<3, using: &rng), j = Int.random(in: 0..<3, using: &rng)
            if i != j { try exchange(replicas[i], replicas[j]) }
        }
        // Everyone converges: the redacted copy's changes merge into the others, whose full
        // histories supply what it cannot send.
        for r in replicas { try r.apply(d.allChanges()) }
        for _ in 0..<2 {
            for x in replicas { for y in replicas where x !== y { try exchange(x, y) } }
        }
        for r in replicas { try d.apply(r.allChanges()); try f.apply(r.allChanges()) }
        try check("end")
        for r in replicas {
            guard r.pendingChangeCount == 0, try reads(r, t) == reads(d, t) else {
                throw Mismatch(description: "replica \(r.actor) differs from the redacted copy at the end")
            }
        }
        // And the redacted copy saves (redacted) and loads into the same state.
        let again = try Document.load(d.save())
        guard try reads(again, t) == reads(d, t), Set(again.currentHeads) == Set(d.currentHeads) else {
            throw Mismatch(description: "resave of the redacted copy differs")
        }
    }

    // MARK: Hostile input

    /// Mutated redacted payloads behind a valid checksum: each loads into a document that
    /// can be read and saved again, or throws `CRDTError`; never a crash.
    @Test func mutatedRedactedPayloadsNeverCrash() throws {
        let seed = testSeed("RedactedSaveTests.mutatedRedactedPayloadsNeverCrash", fallback: 0x5EED_0404)
        var rng = SplitMix64(seed: seed)
        let doc = try DecoderFuzzTests.sampleDocument(seed: 3)
        let payload = try DocumentFormat.unframe(try doc.save(history: .redacted))
        var loaded = 0, refused = 0
        for round in 0..<2000 {
            var m = payload
            if round % 4 == 3 {
                // The tail: the redacted section.
                for _ in 0..<2 {
                    let i = m.count - 1 - Int.random(in: 0..<min(m.count, 200), using: &rng)
                    m[i] = [0x00, 0x01, 0x7F, 0x80, 0xFF][Int.random(in: 0..<5, using: &rng)]
                }
            } else {
                DecoderFuzzTests.mutate(&m, kind: round % 4, using: &rng)
            }
            do {
                let d = try Document.load(DocumentFormat.frame(m, version: DocumentFormat.redactedVersion, compress: round % 2 == 0))
                loaded += 1
                let value = try d.jsonValue()
                let saved = d.save()
                let again = try Document.load(saved, actor: d.actor)
                if !DecoderFuzzTests.same(try again.jsonValue(), value) || again.save() != saved {
                    Issue.record("seed \(seed) round \(round): a loaded mutation does not survive save → load")
                }
            } catch is CRDTError {
                refused += 1
            } catch {
                Issue.record("seed \(seed) round \(round): untyped error \(error)")
            }
        }
        print("RedactedSaveTests: seed \(seed): \(loaded) mutated redacted payloads loaded, \(refused) refused")
    }

    @Test func craftedRedactedSectionsAreRefused() throws {
        let (d, _) = try Self.documentWithDeletedSecret()
        let owners = d.ownersOfDeletedContent()
        #expect(owners.count == 1)
        d.seal(owners[0])
        let h = d.records[owners[0]].hash!
        func load(_ redacted: [(record: Int, hash: ChangeHash)]) throws {
            let (payload, version) = d.encodePayload(redacted: redacted)
            _ = try Document.load(DocumentFormat.frame(payload, version: version))
        }
        // The change that lost its deleted text must be named.
        #expect(throws: CRDTError.self) { try load([]) }
        // Out of range, duplicate hashes.
        #expect(throws: CRDTError.self) { try load([(d.records.count, h)]) }
        #expect(throws: CRDTError.self) { try load([(0, h), (owners[0], h)]) }
        try load([(owners[0], h)])
        // An earlier reader's version byte: version 3 without deleted content is refused.
        let (payload, _) = d.encodePayload(redacted: [(owners[0], h)])
        #expect(throws: CRDTError.self) { try Document.load(DocumentFormat.frame(payload, version: DocumentFormat.readableVersion)).finishLoading() }
    }

    @Test func hugeRedactedSpansDoNotAllocate() throws {
        let d = Document(actor: .named("x"))
        let t = try d.change { tx in try tx.put(.root, "t", .text)! }
        try d.change { tx in try tx.splice(t, at: 0, insert: "abc") }
        // Deleted by another actor, so the insert's change can grow without overlapping it.
        let y = Document(actor: .named("y"))
        try y.apply(d.allChanges())
        try y.change { tx in try tx.splice(t, at: 0, delete: 3) }
        try d.apply(y.allChanges())
        #expect(try Document.load(try d.save(history: .redacted)).text(t) == "")
        // Tamper with the state before encoding: the deleted span and the change that inserted
        // it declare 2^39 items, which would be 512 GiB of placeholders.
        let huge = 1 << 39
        guard case .sequence(let s)? = d.objects[try d.internalID(t)] else { throw Mismatch(description: "no text") }
        let owner = d.ownersOfDeletedContent()[0]
        d.seal(owner)
        let hash = d.records[owner].hash!
        s.leaves[0].spans[0].length = huge
        d.records[owner].opCount = huge
        let (payload, version) = d.encodePayload(redacted: [(owner, hash)])
        #expect(throws: CRDTError.self) { try Document.load(DocumentFormat.frame(payload, version: version)) }
        do {
            _ = try Document.load(DocumentFormat.frame(payload, version: version))
        } catch let e as CRDTError {
            #expect(e.code == .tooLarge, "\(e)")
        }
    }

    // MARK: Sizes

    @Test(arguments: [false, true])
    func sizesOnTheAutomergePaperTrace(changePerTransaction: Bool) throws {
        let path = "\(EditingTrace.sharedDirectory())/automerge-paper.json.gz"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let trace = try EditingTrace.load(path: path)
        let doc = try TraceReplay.replay(trace, changePerTransaction: changePerTransaction)
        let full = doc.save()
        var clock = ContinuousClock.now
        let redacted = try doc.save(history: .redacted)
        let saveTime = ContinuousClock.now - clock
        clock = ContinuousClock.now
        let loaded = try Document.load(redacted)
        let text = try TraceReplay.text(of: loaded)
        let loadTime = ContinuousClock.now - clock
        clock = ContinuousClock.now
        let loadedFull = try Document.load(full)
        try loadedFull.finishLoading()
        let fullLoadTime = ContinuousClock.now - clock
        #expect(text == trace.endContent)
        #expect(loaded.currentHeads == doc.currentHeads)
        print("""
            RedactedSaveTests: automerge-paper (\(doc.records.count) changes): full save \(full.count) bytes, \
            redacted \(redacted.count) bytes (\(loaded.redactedRecords.count) changes redacted); redacted save \(saveTime), \
            load \(loadTime) (full save loaded with its history: \(fullLoadTime))
            """)
    }
}
