import Testing
@testable import ImprintCRDT
import ImprintTestSupport

/// A version 3 document opens for reading without decoding its history; the history is
/// decoded and validated on first need, and damage found then is thrown by every later
/// throwing call (`docs/format.md`, "What load does").
@Suite struct DeferredLoadTests {
    @Test func theTextIsReadBeforeTheHistoryIsDecoded() throws {
        let original = try DecoderFuzzTests.sampleDocument(seed: 11)
        let saved = original.save()
        #expect(saved[4] == DocumentFormat.runVersion)
        let loaded = try Document.load(saved)
        guard case .object(let t, .text)? = try loaded.get(.root, "t") else {
            Issue.record("no text")
            return
        }
        #expect(try loaded.text(t) == original.text(t))
        #expect(try loaded.keys(.root) == original.keys(.root))
        #expect(loaded.deferredLoad != nil, "reading maps and text decodes no history")
        // Anything else decodes it: the same values, heads and changes as the original.
        #expect(try loaded.jsonValue() == original.jsonValue())
        #expect(loaded.deferredLoad == nil)
        #expect(loaded.currentHeads == original.currentHeads)
        #expect(loaded.allChanges().map(\.hash) == original.allChanges().map(\.hash))
        // It edits, saves and loads on as before.
        try loaded.change { tx in try tx.splice(t, at: 0, insert: "é😀") }
        let again = try Document.load(loaded.save())
        #expect(try again.text(t) == loaded.text(t))
        #expect(try again.jsonValue() == loaded.jsonValue())
    }

    /// Documents in the layouts of versions 1 and 2 load as before and hold the same as the
    /// version 3 save of the same document.
    @Test func oldLayoutsLoadAsTheNewOne() throws {
        for seed in UInt64(20)..<UInt64(26) {
            let d = try DecoderFuzzTests.sampleDocument(seed: seed)
            if seed % 2 == 0 {
                guard case .object(let t, .text)? = try d.get(.root, "t") else { continue }
                try d.change { tx in try tx.mark(t, 0..<1, "bold") }
            }
            let old = d.save(visibleTextFirst: false)
            #expect(old[4] == (seed % 2 == 0 ? DocumentFormat.markVersion : DocumentFormat.version))
            let fromOld = try Document.load(old)
            let fromNew = try Document.load(d.save())
            #expect(fromOld.deferredLoad == nil, "old layouts load in full")
            #expect(try fromOld.jsonValue() == fromNew.jsonValue(), "seed \(seed)")
            #expect(fromOld.allChanges().map(\.hash) == fromNew.allChanges().map(\.hash), "seed \(seed)")
            #expect(fromNew.save(visibleTextFirst: false).count > 0)
        }
    }

    @Test func mergingALoadedDocumentIntoAFreshOneAdoptsItUndecoded() throws {
        let original = try DecoderFuzzTests.sampleDocument(seed: 12)
        let fresh = Document(actor: .named("target"))
        try fresh.merge(original.save())
        #expect(fresh.deferredLoad != nil)
        guard case .object(let t, .text)? = try fresh.get(.root, "t") else {
            Issue.record("no text")
            return
        }
        #expect(try fresh.text(t) == original.text(t))
        try fresh.change { tx in try tx.splice(t, at: 0, insert: "x") }
        #expect(fresh.deferredLoad == nil)
        try original.apply(fresh.allChanges())
        #expect(try original.text(t) == fresh.text(t))
        #expect(original.currentHeads == fresh.currentHeads)
    }

    /// Bytes whose reading part is sound but whose history is not (found by seeded
    /// mutation behind a valid checksum): the damage is thrown once the history is needed,
    /// by every throwing call after that, and the document holds nothing.
    @Test func damageFoundLaterIsThrownByEveryLaterCall() throws {
        let original = try DecoderFuzzTests.sampleDocument(seed: 13)
        let payload = try DocumentFormat.unframe(original.save())
        var rng = SplitMix64(seed: 0x5EED_D3F3)
        var found = 0
        for _ in 0..<2000 where found < 20 {
            var m = payload
            let i = Int.random(in: 0..<m.count, using: &rng)
            m[i] ^= UInt8.random(in: 1...255, using: &rng)
            let bytes = DocumentFormat.frame(m, version: DocumentFormat.runVersion)
            guard let d = try? Document.load(bytes), case .object(let t, .text)? = try? d.get(.root, "t"),
                (try? d.text(t)) != nil
            else { continue }
            let full = Document(actor: d.actor)
            let sound = (try? full.decodePayload(m, version: DocumentFormat.runVersion)) != nil
            if sound {
                try d.finishLoading()
                continue
            }
            found += 1
            #expect(throws: CRDTError.self) { try d.finishLoading() }
            #expect(throws: CRDTError.self) { try d.finishLoading() }
            #expect(throws: CRDTError.self) { try d.text(t) }
            #expect(throws: CRDTError.self) { try d.jsonValue() }
            #expect(throws: CRDTError.self) { try d.change { tx in try tx.put(.root, "x", "y") } }
            #expect(throws: CRDTError.self) { try d.apply(original.allChanges()) }
            #expect(throws: CRDTError.self) { try d.fork() }
            #expect(d.allChanges().isEmpty)
            #expect(d.currentHeads.isEmpty)
            // Saving it writes back the bytes it was loaded from, never an empty document, even
            // when the save is the first call after the load.
            #expect(d.save() == bytes)
            if let again = try? Document.load(bytes) { #expect(again.save() == bytes) }
            // A fresh document that adopts the same bytes, and a merge of the damaged one, throw too.
            let target = Document()
            try target.merge(bytes)
            #expect(throws: CRDTError.self) { try target.finishLoading() }
            #expect(throws: CRDTError.self) { try Document().merge(d) }
        }
        #expect(found > 0, "the mutations found no damage that reading alone misses")
    }
}
