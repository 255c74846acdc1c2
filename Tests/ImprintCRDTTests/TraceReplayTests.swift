import EditingTraces
import Foundation
import Testing
@testable import ImprintCRDT

@Suite("Editing traces", .serialized)
struct TraceReplayTests {
    static let directory = EditingTrace.sharedDirectory()

    @Test("sequential traces end at endContent and survive save/load/merge",
          arguments: ["automerge-paper", "seph-blog1", "sveltecomponent"])
    func sequential(name: String) throws {
        let trace = try EditingTrace.load(path: "\(Self.directory)/\(name).json.gz")
        let doc = try TraceReplay.replay(trace)
        #expect(try TraceReplay.text(of: doc) == trace.endContent)

        let saved = doc.save()
        let loaded = try Document.load(saved)
        #expect(try TraceReplay.text(of: loaded) == trace.endContent)
        #expect(loaded.currentHeads == doc.currentHeads)

        // Merge through change-by-change integration (not the empty-document fast path).
        let other = Document(actor: ActorID.named("other"))
        try other.change { tx in try tx.put(.root, "title", "x") }
        try other.merge(saved)
        #expect(try TraceReplay.text(of: other) == trace.endContent)
    }

    @Test("the concurrent trace friendsforever converges to endContent")
    func concurrent() throws {
        let trace = try EditingTrace.load(path: "\(Self.directory)/friendsforever.json.gz")
        #expect(trace.isConcurrent)
        let doc = try TraceReplay.replay(trace)
        #expect(try TraceReplay.text(of: doc) == trace.endContent)
        let loaded = try Document.load(doc.save())
        #expect(try TraceReplay.text(of: loaded) == trace.endContent)
        #expect(loaded.currentHeads == doc.currentHeads)
    }
}
