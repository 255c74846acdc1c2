import Foundation
@testable import ImprintCRDT
import ImprintTestSupport
import Testing

/// Formatting marks with Peritext semantics: the paper's examples, seeded random concurrent
/// formatting on several replicas, save/load, sync, diff and patches, history and undo.
@Suite struct MarkTests {
    static let bold = Mark(name: "bold")
    static let italic = Mark(name: "italic")

    static let actorA = ActorID(bytes: [0xA])!, actorB = ActorID(bytes: [0xB])!

    /// Two replicas `a` and `b` (`b`'s actor sorts after `a`'s) of a text holding `text`.
    func pair(_ text: String) throws -> (Document, Document, ObjectID) {
        let a = Document(actor: Self.actorA)
        let t = try a.change(time: 0) { tx -> ObjectID in
            let t = try tx.put(.root, "t", .text)!
            try tx.splice(t, at: 0, insert: text)
            return t
        }
        let b = Document(actor: Self.actorB)
        try b.apply(a.allChanges())
        return (a, b, t)
    }

    /// Exchanges every change both ways and checks both replicas read the same spans.
    func exchange(_ a: Document, _ b: Document, _ t: ObjectID) throws -> [TextSpan] {
        try a.apply(b.allChanges())
        try b.apply(a.allChanges())
        let spans = try a.spans(t)
        #expect(try b.spans(t) == spans)
        #expect(spans.map(\.text).joined() == (try a.text(t)))
        return spans
    }

    // MARK: Local behaviour

    @Test func spansOfPlainAndEmptyText() throws {
        let (a, _, t) = try pair("plain")
        #expect(try a.spans(t) == [TextSpan("plain")])
        let empty = try a.change { try $0.put(.root, "e", .text)! }
        #expect(try a.spans(empty) == [])
        #expect(throws: CRDTError.self) { try a.change { tx in try tx.mark(t, 2..<9, "bold") } }
        try a.change { tx in try tx.mark(t, 2..<2, "bold") }  // empty: nothing
        #expect(try a.spans(t) == [TextSpan("plain")])
    }

    @Test func boldGrowsAtItsEndAndLinksDoNot() throws {
        let (a, _, t) = try pair("one two")
        try a.change { tx in
            try tx.mark(t, 0..<3, "bold")
            try tx.mark(t, 4..<7, "link", .string("https://two"), expand: .none)
        }
        try a.change { tx in
            try tx.splice(t, at: 7, insert: "!")   // after the link
            try tx.splice(t, at: 3, insert: "s")   // after the bold
            try tx.splice(t, at: 0, insert: ">")   // before the bold: does not join
        }
        let link = Mark(name: "link", value: .string("https://two"))
        #expect(try a.spans(t) == [TextSpan(">"), TextSpan("ones", marks: [Self.bold]), TextSpan(" "),
                                   TextSpan("two", marks: [link]), TextSpan("!")])
    }

    @Test func unboldingTheEndOfARunKeepsTypedTextPlain() throws {
        let (a, _, t) = try pair("abcdef")
        try a.change { tx in try tx.mark(t, 0..<6, "bold") }
        try a.change { tx in try tx.unmark(t, 3..<6, "bold") }
        try a.change { tx in try tx.splice(t, at: 6, insert: "g") }
        #expect(try a.spans(t) == [TextSpan("abc", marks: [Self.bold]), TextSpan("defg")])
        // Expanding at the start: text typed before the range joins it.
        try a.change { tx in try tx.mark(t, 3..<4, "italic", expand: .both) }
        try a.change { tx in try tx.splice(t, at: 3, insert: "X") }
        // (X also follows "abc", so it joins their bold.)
        #expect(try a.spans(t) == [TextSpan("abc", marks: [Self.bold]), TextSpan("X", marks: [Self.bold, Self.italic]),
                                   TextSpan("d", marks: [Self.italic]), TextSpan("efg")])
    }

    /// Local inserts among tombstones are placed as Peritext places them: after a deleted
    /// character a link ends at, before a deleted character a mark starts at.
    @Test func typingWhereAMarkEdgeWasDeleted() throws {
        let (a, b, t) = try pair("see docs now")
        let link = Mark(name: "link", value: .string("u"))
        try a.change { tx in try tx.mark(t, 4..<8, "link", .string("u"), expand: .none) }
        try a.change { tx in try tx.splice(t, at: 6, delete: 2) }   // "see do now": the link's last two gone
        try a.change { tx in try tx.splice(t, at: 6, insert: "!") }
        #expect(try exchange(a, b, t) == [TextSpan("see "), TextSpan("do", marks: [link]), TextSpan("! now")])
        // A bold whose first character was deleted: typing after the text before it stays plain.
        try b.change { tx in try tx.mark(t, 8..<11, "bold") }          // "now"
        try b.change { tx in try tx.splice(t, at: 8, delete: 1) }       // "ow"
        try b.change { tx in try tx.splice(t, at: 8, insert: "N") }
        #expect(try exchange(a, b, t) == [TextSpan("see "), TextSpan("do", marks: [link]), TextSpan("! N"),
                                          TextSpan("ow", marks: [Self.bold])])
    }

    /// Undoing a deletion of formatted text brings its marks back with it.
    @Test func undoingADeletionRestoresItsMarks() throws {
        let (a, b, t) = try pair("abcdef")
        let link = Mark(name: "link", value: .string("u"))
        try a.change { tx in
            try tx.mark(t, 1..<3, "bold")
            try tx.mark(t, 3..<5, "link", .string("u"), expand: .none)
        }
        let formatted = try a.spans(t)
        try a.change { tx in try tx.splice(t, at: 2, delete: 3) }
        #expect(try a.spans(t) == [TextSpan("a"), TextSpan("b", marks: [Self.bold]), TextSpan("f")])
        #expect(try a.undo())
        #expect(try a.spans(t) == formatted)
        #expect(formatted == [TextSpan("a"), TextSpan("bc", marks: [Self.bold]), TextSpan("de", marks: [link]), TextSpan("f")])
        #expect(try exchange(a, b, t) == formatted)
        #expect(try Document.load(a.save()).spans(t) == formatted)
        #expect(try a.redo())
        #expect(try a.spans(t) == [TextSpan("a"), TextSpan("b", marks: [Self.bold]), TextSpan("f")])
    }

    // MARK: The Peritext paper's examples

    /// Bold made concurrently with text typed at its end: the text joins the bold run;
    /// text typed at its start does not.
    @Test func concurrentBoldAndInsertionAtTheBoundary() throws {
        let (a, b, t) = try pair("The fox jumped.")
        try a.change { tx in try tx.mark(t, 4..<7, "bold") }
        try b.change { tx in
            try tx.splice(t, at: 7, insert: "y")
            try tx.splice(t, at: 4, insert: "quick ")
        }
        #expect(try exchange(a, b, t) == [TextSpan("The quick "), TextSpan("foxy", marks: [Self.bold]), TextSpan(" jumped.")])
    }

    /// A link made concurrently with text typed right after it: the text stays outside.
    @Test func concurrentLinkDoesNotExpand() throws {
        let (a, b, t) = try pair("The fox jumped.")
        try a.change { tx in try tx.mark(t, 4..<7, "link", .string("https://fox.example"), expand: .none) }
        try b.change { tx in try tx.splice(t, at: 7, insert: "es") }
        #expect(try exchange(a, b, t) == [TextSpan("The "), TextSpan("fox", marks: [Mark(name: "link", value: .string("https://fox.example"))]),
                                          TextSpan("es jumped.")])
    }

    /// Overlapping bold from two replicas: the union is bold (one run).
    @Test func overlappingBoldMerges() throws {
        let (a, b, t) = try pair("The fox jumped.")
        try a.change { tx in try tx.mark(t, 0..<7, "bold") }
        try b.change { tx in try tx.mark(t, 4..<14, "bold") }
        #expect(try exchange(a, b, t) == [TextSpan("The fox jumped", marks: [Self.bold]), TextSpan(".")])
    }

    /// Bold and unbold of overlapping ranges: where they overlap the op with the greater id
    /// (Lamport order) wins, on every replica, whatever the arrival order.
    @Test func boldVersusUnboldOverlap() throws {
        // b's unbold is later (greater counter: b made another op first).
        do {
            let (a, b, t) = try pair("The fox jumped.")
            try a.change { tx in try tx.mark(t, 0..<15, "bold") }
            try b.change { tx in try tx.put(.root, "x", 1) }
            try b.change { tx in try tx.unmark(t, 4..<7, "bold") }
            #expect(try exchange(a, b, t) == [TextSpan("The ", marks: [Self.bold]), TextSpan("fox"),
                                              TextSpan(" jumped.", marks: [Self.bold])])
        }
        // a's bold is later: it wins over the unbold everywhere they overlap.
        do {
            let (a, b, t) = try pair("The fox jumped.")
            try a.change { tx in try tx.put(.root, "x", 1) }
            try a.change { tx in try tx.mark(t, 0..<15, "bold") }
            try b.change { tx in try tx.unmark(t, 4..<7, "bold") }
            #expect(try exchange(a, b, t) == [TextSpan("The fox jumped.", marks: [Self.bold])])
        }
        // Equal counters: the actor breaks the tie (b's sorts last), so the unbold wins.
        do {
            let (a, b, t) = try pair("The fox jumped.")
            try a.change { tx in try tx.mark(t, 0..<15, "bold") }
            try b.change { tx in try tx.unmark(t, 4..<7, "bold") }
            #expect(try exchange(a, b, t) == [TextSpan("The ", marks: [Self.bold]), TextSpan("fox"),
                                              TextSpan(" jumped.", marks: [Self.bold])])
        }
    }

    /// Italic and bold of overlapping ranges are independent: the overlap carries both.
    @Test func italicAndBoldOverlap() throws {
        let (a, b, t) = try pair("The fox jumped.")
        try a.change { tx in try tx.mark(t, 0..<7, "italic") }
        try b.change { tx in try tx.mark(t, 4..<14, "bold") }
        #expect(try exchange(a, b, t) == [TextSpan("The ", marks: [Self.italic]), TextSpan("fox", marks: [Self.bold, Self.italic]),
                                          TextSpan(" jumped", marks: [Self.bold]), TextSpan(".")])
    }

    /// Concurrent links with different targets over the same text: one value wins.
    @Test func concurrentLinksPickTheLatest() throws {
        let (a, b, t) = try pair("fox")
        try a.change { tx in try tx.mark(t, 0..<3, "link", .string("https://a"), expand: .none) }
        try b.change { tx in try tx.mark(t, 1..<3, "link", .string("https://b"), expand: .none) }
        #expect(try exchange(a, b, t) == [TextSpan("f", marks: [Mark(name: "link", value: .string("https://a"))]),
                                          TextSpan("ox", marks: [Mark(name: "link", value: .string("https://b"))])])
    }

    /// Comments overlap: each keeps its identity and range; removing one leaves the other.
    @Test func overlappingCommentsKeepTheirIdentity() throws {
        let (a, b, t) = try pair("The fox jumped.")
        let c1 = try a.change { tx in try tx.annotate(t, 0..<7, "comment", .string("first")) }
        let c2 = try b.change { tx in try tx.annotate(t, 4..<14, "comment", .string("second")) }
        let m1 = Mark(name: "comment", value: .string("first"), id: c1), m2 = Mark(name: "comment", value: .string("second"), id: c2)
        #expect(try exchange(a, b, t) == [TextSpan("The ", marks: [m1]), TextSpan("fox", marks: [m1, m2].sorted()),
                                          TextSpan(" jumped", marks: [m2]), TextSpan(".")])
        // Comments do not grow; text typed inside one is in it.
        try a.change { tx in
            try tx.splice(t, at: 14, insert: "!")
            try tx.splice(t, at: 5, insert: "-")
        }
        try b.change { tx in try tx.unmark(t, 0..<15, id: c1) }
        #expect(try exchange(a, b, t) == [TextSpan("The "), TextSpan("f-ox jumped", marks: [m2]), TextSpan("!.")])
        #expect(throws: CRDTError.self) {
            try a.change { tx in try tx.unmark(t, 0..<1, id: MarkID(counter: 999, actor: .named("a"))) }
        }
    }

    /// Deleting the text a mark's range starts or ends at leaves the anchors on tombstones:
    /// the rest of the range keeps its marks, and concurrent typing around them is placed
    /// as for any other text.
    @Test func marksSurviveDeletionOfTheirEdges() throws {
        let (a, b, t) = try pair("abcdef")
        try a.change { tx in try tx.mark(t, 1..<5, "bold") }
        try b.change { tx in try tx.splice(t, at: 1, delete: 1) }   // deletes "b", the start anchor
        try b.change { tx in try tx.splice(t, at: 3, delete: 1) }   // deletes "e", the last char
        #expect(try exchange(a, b, t) == [TextSpan("a"), TextSpan("cd", marks: [Self.bold]), TextSpan("f")])
        try a.change { tx in try tx.splice(t, at: 3, insert: "E") }   // at the end of the bold run
        #expect(try exchange(a, b, t) == [TextSpan("a"), TextSpan("cdE", marks: [Self.bold]), TextSpan("f")])
    }

    /// The worked example of `docs/crdt-semantics.md` ("Marks").
    @Test func theWorkedExampleOfTheSemanticsDoc() throws {
        let (a, b, t) = try pair("The fox jumped.")
        try a.change { tx in
            try tx.mark(t, 0..<15, "bold")
            try tx.mark(t, 8..<14, "link", .string("u"), expand: .none)
        }
        try b.change { tx in
            try tx.unmark(t, 4..<7, "bold")
            try tx.splice(t, at: 7, insert: "y")
        }
        let ops = a.lastLocalChange!
        #expect(ops.startOp == 17)
        let bold = Self.bold, link = Mark(name: "link", value: .string("u"))
        #expect(try exchange(a, b, t) == [TextSpan("The ", marks: [bold]), TextSpan("foxy"), TextSpan(" ", marks: [bold]),
                                          TextSpan("jumped", marks: [bold, link]), TextSpan(".", marks: [bold])])
        try a.change { tx in try tx.splice(t, at: 15, insert: "!") }
        #expect(try Array(a.spans(t)[3...]) == [TextSpan("jumped", marks: [bold, link]), TextSpan("!.", marks: [bold])])
    }

    // MARK: Random concurrent formatting

    /// Replicas edit and format concurrently, exchanging changes in random orders and
    /// subsets; after everyone has everything, all read the same spans, and so do a saved
    /// and loaded copy and a replica that applies all changes in one go.
    @Test func randomConcurrentFormattingConverges() throws {
        let seed = testSeed("MarkTests.random", fallback: 0x9E21_7E47)
        var rng = SplitMix64(seed: seed)
        let rounds = ProcessInfo.processInfo.environment["IMPRINT_TEST_ITERATIONS"].flatMap { Int($0) } ?? 40
        var formattedRounds = 0
        for round in 0..<rounds {
            let count = Int.random(in: 3...4, using: &rng)
            let (docs, t) = try replicas((0..<count).map { "r\($0)" })
            for _ in 0..<Int.random(in: 4...14, using: &rng) {
                let d = docs.randomElement(using: &rng)!
                try Self.randomEdit(d, t, &rng)
                if Int.random(in: 0..<3, using: &rng) == 0 {
                    // Pass some changes on, in a random order (dependencies may be missing).
                    let to = docs.randomElement(using: &rng)!
                    let changes = d.allChanges().shuffled(using: &rng)
                    try to.apply(Array(changes.prefix(Int.random(in: 0...changes.count, using: &rng))))
                }
            }
            for d in docs {
                for other in docs.shuffled(using: &rng) where other !== d { try d.apply(other.allChanges().shuffled(using: &rng)) }
            }
            let expected = try docs[0].spans(t)
            if expected.contains(where: { !$0.marks.isEmpty }) { formattedRounds += 1 }
            for (k, d) in docs.enumerated() {
                #expect(d.pendingChangeCount == 0)
                #expect(try d.spans(t) == expected, "round \(round), replica \(k), seed \(seed)")
            }
            let loaded = try Document.load(docs[1].save())
            #expect(try loaded.spans(t) == expected, "round \(round) loaded, seed \(seed)")
            #expect(loaded.allChanges().map(\.hash).sorted() == docs[1].allChanges().map(\.hash).sorted(), "seed \(seed)")
            let fresh = Document()
            try fresh.apply(docs[2].allChanges().reversed())
            #expect(try fresh.spans(t) == expected, "round \(round) fresh, seed \(seed)")
            if try docs[0].spans(t) != expected { return }
        }
        #expect(formattedRounds >= rounds / 2, "most rounds end with formatted text (seed \(seed))")
    }

    /// One random local edit: typing, deleting, or formatting (bold, italic, link, a comment).
    static func randomEdit(_ d: Document, _ t: ObjectID, _ rng: inout SplitMix64) throws {
        try d.change { tx in
            let length = try d.length(t)
            let lo = Int.random(in: 0...length, using: &rng)
            let hi = Int.random(in: lo...min(length, lo + 6), using: &rng)
            switch Int.random(in: 0..<8, using: &rng) {
            case 0, 1: try tx.splice(t, at: lo, insert: String("xyz é🙂".randomElement(using: &rng)!))
            case 2: if hi > lo { try tx.splice(t, at: lo, delete: hi - lo) }
            case 3: try tx.mark(t, lo..<hi, ["bold", "italic"].randomElement(using: &rng)!)
            case 4: try tx.unmark(t, lo..<hi, ["bold", "italic"].randomElement(using: &rng)!)
            case 5: try tx.mark(t, lo..<hi, "link", .string("u\(Int.random(in: 0..<3, using: &rng))"), expand: .none)
            case 6: if hi > lo { try tx.annotate(t, lo..<hi, "comment") }
            default:
                // Remove (part of) a comment someone made.
                let seq = try d.sequence(t, text: true).1
                if hi > lo, let added = seq.marks.filter({ $0.mark.instance == $0.id }).randomElement(using: &rng) {
                    try tx.unmark(t, lo..<hi, id: MarkID(counter: added.id.counter, actor: d.actors[Int(added.id.actor)]))
                }
            }
        }
    }

    // MARK: Persistence, sync, history

    @Test func saveAndLoadKeepMarks() throws {
        let (a, b, t) = try pair("The fox jumped.")
        let plain = a.save()
        #expect(plain[4] == DocumentFormat.runVersion)
        #expect(a.save(visibleTextFirst: false)[4] == 1, "without marks the old layout is still version 1")
        try a.change { tx in
            try tx.mark(t, 0..<7, "bold")
            try tx.annotate(t, 4..<9, "comment", .string("c"))
        }
        let change = try #require(a.lastLocalChange)
        #expect(change.bytes[4] == 2, "a change with a mark op is version 2")
        #expect(b.allChanges().allSatisfy { $0.bytes[4] == 1 })
        let saved = a.save()
        #expect(saved[4] == DocumentFormat.runVersion)
        #expect(a.save(visibleTextFirst: false)[4] == 2, "with marks the old layout is version 2")
        let loaded = try Document.load(saved)
        #expect(try loaded.spans(t) == a.spans(t))
        #expect(loaded.allChanges().map(\.hash) == a.allChanges().map(\.hash))
        // Editing and formatting go on after a load; incremental saves carry mark ops too.
        try loaded.change { tx in
            try tx.splice(t, at: 7, insert: "y")
            try tx.unmark(t, 0..<3, "bold")
        }
        let both = saved + loaded.saveIncremental()
        #expect(try Document.load(both).spans(t) == loaded.spans(t))
        #expect(try Document.load(loaded.save()).spans(t) == loaded.spans(t))
        // Another replica gets the same through sync messages.
        var sa = SyncState(), sb = SyncState()
        _ = try syncRounds(loaded, &sa, b, &sb)
        #expect(try b.spans(t) == loaded.spans(t))
        let comment = Mark(name: "comment", value: .string("c"), id: MarkID(counter: change.startOp + 1, actor: Self.actorA))
        #expect(try b.spans(t) == [TextSpan("The"), TextSpan(" ", marks: [Self.bold]), TextSpan("foxy", marks: [Self.bold, comment]),
                                   TextSpan(" j", marks: [comment]), TextSpan("umped.")])
    }

    /// A document saved by the CLI before marks existed (a sample bundle's snapshot) loads
    /// unchanged, reads as plain spans and saves back as version 3 (or, in the old layout,
    /// byte for byte as version 1).
    @Test func aDocumentSavedBeforeMarksLoads() throws {
        let snapshot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Bundles/synced.imprint/snapshots/desk.snapshot")
        let bytes = [UInt8](try Data(contentsOf: snapshot))
        let start = try #require((0...(bytes.count - 4)).first { Array(bytes[$0..<$0 + 4]) == DocumentFormat.magic })
        let document = Array(bytes[start...])
        let end = try DocumentFormat.extent(document)
        #expect(document[4] == 1)
        let doc = try Document.load(Array(document[..<end]))
        guard case .object(let body, .text)? = try doc.get(.root, "body") else {
            Issue.record("no body text")
            return
        }
        let text = try doc.text(body)
        #expect(!text.isEmpty)
        #expect(try doc.spans(body) == [TextSpan(text)])
        let resaved = doc.save()
        #expect(resaved[4] == DocumentFormat.runVersion)
        #expect(try Document.load(resaved).text(body) == text)
        // Opened as the actor that saved it (first in its actor table), it saves back in the
        // old layout byte for byte as the old build wrote it.
        var payload = ByteReader(try DocumentFormat.unframe(Array(document[..<end])))
        _ = try payload.uleb()
        let writer = try #require(ActorID(bytes: Array(try payload.lengthPrefixed())))
        #expect(try Document.load(Array(document[..<end]), actor: writer).save(visibleTextFirst: false) == Array(document[..<end]))
        #expect(try Document.load(resaved).allChanges().map(\.hash) == doc.allChanges().map(\.hash))
        // Formatting it makes a document that loads with its marks.
        try doc.change { tx in try tx.mark(body, 0..<1, "bold") }
        #expect(try Document.load(doc.save()).spans(body) == doc.spans(body))
    }

    /// Mutated version 2 and 3 payloads (behind a valid checksum) and mutated mark changes either
    /// fail with a typed error or give a document that keeps `DecoderFuzzTests`' promises
    /// and reads the same spans after save/load and after replaying its history.
    @Test func mutatedFormattedDocumentsAndChangesKeepTheirPromises() throws {
        let seed = testSeed("MarkTests.fuzz", fallback: 0x5EED_0A11)
        var rng = SplitMix64(seed: seed)
        let (a, b, t) = try pair("The fox jumped over the dog.")
        for k in 0..<16 { try Self.randomEdit(k % 2 == 0 ? a : b, t, &rng) }
        try a.change { tx in try tx.mark(t, 0..<3, "bold") }
        try a.apply(b.allChanges())
        func spansKept(_ d: Document) -> [String] {
            guard case .object(let text, .text)? = try? d.get(.root, "t"), let spans = try? d.spans(text) else { return [] }
            var broken: [String] = []
            if (try? Document.load(d.save()).spans(text)) != spans { broken.append("spans differ after save → load") }
            let replayed = Document()
            if (try? replayed.apply(d.allChanges())) == nil || (try? replayed.spans(text)) != spans {
                broken.append("spans differ after replay")
            }
            return broken
        }
        let payloads = [
            (try DocumentFormat.unframe(a.save(visibleTextFirst: false)), DocumentFormat.markVersion),
            (try DocumentFormat.unframe(a.save()), DocumentFormat.readableVersion),
        ]
        var loaded = 0
        for round in 0..<1500 {
            let (payload, version) = payloads[round % 2]
            var m = payload
            let i = Int.random(in: (m.count * 2 / 3)..<m.count, using: &rng)   // bias to the spans and marks
            switch round / 2 % 3 {
            case 0: m[i] ^= UInt8.random(in: 1...255, using: &rng)
            case 1: m = Array(m.prefix(i))
            default: m[i] = [0x00, 0x01, 0x02, 0x03, 0x7F, 0x80][Int.random(in: 0..<6, using: &rng)]
            }
            do {
                let d = try Document.load(DocumentFormat.frame(m, version: version))
                try d.finishLoading()
                loaded += 1
                let broken = DecoderFuzzTests.brokenPromises(d) + spansKept(d)
                if !broken.isEmpty { Issue.record("seed \(seed) round \(round): a mutated payload loaded but \(broken)") }
            } catch is CRDTError {
            } catch {
                Issue.record("seed \(seed) round \(round): untyped error \(error)")
            }
        }
        let changes = a.allChanges()
        let markChanges = changes.filter { $0.bytes[4] == ChangeCoding.markVersion }
        #expect(!markChanges.isEmpty)
        var accepted = 0
        for round in 0..<600 {
            let original = markChanges[round % markChanges.count]
            var m = original.bytes
            m[Int.random(in: 5..<m.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            guard let c = try? Change(bytes: m) else { continue }
            let fresh = Document()
            try fresh.apply(changes.filter { $0.hash != original.hash })
            if (try? fresh.apply(c)) != nil { accepted += 1 }
            let broken = DecoderFuzzTests.brokenPromises(fresh) + spansKept(fresh)
            if !broken.isEmpty { Issue.record("seed \(seed) round \(round): after a mutated change \(broken)") }
        }
        print("MarkTests.fuzz: seed \(seed): \(loaded) mutated payloads loaded, \(accepted) mutated changes applied; all kept their promises")
    }

    @Test func laterFormatVersionsAreRefusedWithATypedError() throws {
        let (a, _, t) = try pair("abc")
        try a.change { tx in try tx.mark(t, 0..<2, "bold") }
        var saved = a.save()
        saved[4] = DocumentFormat.runVersion + 1
        #expect { try Document.load(saved) } throws: { ($0 as? CRDTError)?.code == .unsupportedVersion }
        var change = a.lastLocalChange!.bytes
        change[4] = 3
        #expect { try Change(bytes: change) } throws: { ($0 as? CRDTError)?.code == .unsupportedVersion }
        // A mark op in a version 1 change is malformed (old readers see version 2 instead).
        change[4] = 1
        #expect { try Change(bytes: change) } throws: { ($0 as? CRDTError)?.code == .malformed }
    }

    @Test func spansAtPastHeadsAndDiff() throws {
        let (a, b, t) = try pair("The fox jumped.")
        let plainHeads = a.currentHeads
        try a.change { tx in try tx.mark(t, 4..<7, "bold") }
        let boldHeads = a.currentHeads
        try b.change { tx in try tx.splice(t, at: 7, insert: "y") }
        try a.apply(b.allChanges())
        #expect(try a.spans(t, at: plainHeads) == [TextSpan("The fox jumped.")])
        #expect(try a.spans(t, at: boldHeads) == [TextSpan("The "), TextSpan("fox", marks: [Self.bold]), TextSpan(" jumped.")])
        // diff from any version to any other, applied to a view of the first, gives the second.
        let all = [plainHeads, boldHeads, b.currentHeads, a.currentHeads]
        for from in all {
            for to in all {
                let model = try PatchModel(a, at: from)
                for p in try a.diff(from: from, to: to) { try model.apply(p) }
                #expect(model.spans(t) == (try a.spans(t, at: to)), "\(from) -> \(to)")
            }
        }
    }

    @Test func undoAndRedoFormatting() throws {
        let (a, _, t) = try pair("abcdef")
        try a.change { tx in try tx.mark(t, 0..<4, "bold") }
        try a.change { tx in try tx.unmark(t, 2..<6, "bold") }
        #expect(try a.spans(t) == [TextSpan("ab", marks: [Self.bold]), TextSpan("cdef")])
        #expect(try a.undo())
        #expect(try a.spans(t) == [TextSpan("abcd", marks: [Self.bold]), TextSpan("ef")])
        // The restored bold grows at its end again, as the original did.
        #expect(try a.redo())
        #expect(try a.spans(t) == [TextSpan("ab", marks: [Self.bold]), TextSpan("cdef")])
        #expect(try a.undo())
        #expect(try a.undo())
        #expect(try a.spans(t) == [TextSpan("abcdef")])
        let c = try a.change { tx in try tx.annotate(t, 1..<3, "comment") }
        #expect(try a.spans(t)[1] == TextSpan("bc", marks: [Mark(name: "comment", id: c)]))
        #expect(try a.undo())
        #expect(try a.spans(t) == [TextSpan("abcdef")])
        #expect(try Document.load(a.save()).spans(t) == [TextSpan("abcdef")])
    }

    /// A view fed only by `patches()` holds the same spans as the document through local
    /// formatting, typing at marks' edges, remote changes, undo and redo.
    @Test func patchStreamReportsMarks() async throws {
        let seed = testSeed("MarkTests.patches", fallback: 0x3A2C_0011)
        var rng = SplitMix64(seed: seed)
        let (a, b, t) = try pair("The fox jumped.")
        // Undoing the text's creation would detach it from the root, and patches only
        // describe what the root reaches.
        a.undoLog.removeAll()
        var stream = a.patches().makeAsyncIterator()
        let model = try PatchModel(a, at: a.currentHeads)
        var origins: [PatchBatch.Origin] = []
        for step in 0..<120 {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...4: try Self.randomEdit(a, t, &rng)
            case 5, 6:
                try Self.randomEdit(b, t, &rng)
                try a.apply(b.changes(since: []))
            case 7: _ = try a.undo()
            case 8: _ = try a.redo()
            default: try b.apply(a.allChanges())
            }
            // The sentinel is no undo step, so undo and redo reach the edits (and redo stays possible).
            a.recordingUndo = false
            try a.change { tx in try tx.put(.root, "tick", .scalar(.int(Int64(step)))) }
            a.recordingUndo = true
            try await PatchStreamTests.drain(&stream, into: model, tick: Int64(step), origins: &origins)
            let expected = try a.spans(t)
            #expect(model.spans(t) == expected, "step \(step), seed \(seed)")
            if model.spans(t) != expected { return }
        }
        #expect(Set(origins) == [.local, .remote, .undo], "seed \(seed)")
    }
}
