import EditingTraces
import Foundation
import Testing
@testable import ImprintCRDT

/// Every trace in the shared traces folder, sequential and concurrent, through every way a
/// document reaches another replica: replayed, saved and loaded, merged into an empty
/// document (which adopts the saved state as it is), and merged change by change into a
/// document that already has history; each must end at the trace's `endContent`.
@Suite("Editing traces", .serialized)
struct TraceReplayTests {
    static let directory = EditingTrace.sharedDirectory()

    /// The traces' names (files `<name>.json.gz`), found in the folder so that a trace added
    /// there is checked without a change here.
    static func traceNames() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return files.filter { $0.hasSuffix(".json.gz") }.map { String($0.dropLast(".json.gz".count)) }.sorted()
    }

    @Test func theFolderHoldsTheKnownTraces() {
        // The parameterised test below would pass with no arguments: make sure it has them.
        let names = Set(Self.traceNames())
        #expect(names.isSuperset(of: ["automerge-paper", "seph-blog1", "sveltecomponent", "friendsforever"]), "\(Self.directory): \(names)")
    }

    @Test("each trace ends at endContent replayed, loaded, merged into an empty document and merged change by change",
          arguments: traceNames())
    func everyPath(name: String) throws {
        let trace = try EditingTrace.load(path: "\(Self.directory)/\(name).json.gz")
        if name == "friendsforever" { #expect(trace.isConcurrent) }
        let doc = try TraceReplay.replay(trace)
        #expect(try TraceReplay.text(of: doc) == trace.endContent, "replayed")

        let saved = doc.save()
        let loaded = try Document.load(saved)
        #expect(try TraceReplay.text(of: loaded) == trace.endContent, "loaded")
        #expect(loaded.currentHeads == doc.currentHeads)

        // Into an empty document: the adopt-the-saved-state path of `merge`.
        let empty = Document(actor: ActorID.named("empty"))
        try empty.merge(saved)
        #expect(try TraceReplay.text(of: empty) == trace.endContent, "merged into an empty document")
        #expect(empty.currentHeads == doc.currentHeads)

        // Into a document with history of its own: every change integrated one by one.
        let other = Document(actor: ActorID.named("other"))
        try other.change { tx in try tx.put(.root, "title", "x") }
        try other.merge(saved)
        #expect(try TraceReplay.text(of: other) == trace.endContent, "merged change by change")
        #expect(Set(other.currentHeads).isSuperset(of: doc.currentHeads))

        // And the changes alone, in the order `allChanges` gives, applied to a fresh document.
        let applied = Document(actor: ActorID.named("applied"))
        try applied.apply(doc.allChanges())
        #expect(applied.pendingChangeCount == 0)
        #expect(try TraceReplay.text(of: applied) == trace.endContent, "applied from allChanges")
    }
}
