import Testing
@testable import ImprintCRDT

/// Hostile saves whose text state disagrees with the removes in their history: a loader
/// must refuse each with `.malformed` in every payload layout, since such a document would
/// read one text and replay to another. (`OpClaims.cover` and the count of deleted items
/// are the check.)
@Suite struct DeletedFlagTests {
    /// The spans of `d`'s text `t`, leaf by leaf, for a test to alter in place.
    static func spans(of t: ObjectID, in d: Document) throws -> [(leaf: SpanLeaf, index: Int)] {
        guard case .sequence(let s) = try d.state(t).1 else {
            Issue.record("not a sequence")
            return []
        }
        return s.leaves.flatMap { leaf in leaf.spans.indices.map { (leaf, $0) } }
    }

    @Test func theUntamperedHistoryLoadsWithItsDeletedItem() throws {
        let (d, t) = try DeclaredCountTests.history(changes: 4)
        let spans = try Self.spans(of: t, in: d)
        #expect(spans.contains { $0.leaf.spans[$0.index].deleted })
        try DeclaredCountTests.expectLoads(d, text: t)
    }

    @Test func aDeletedItemThatNoRemoveCoversIsRefused() throws {
        let (d, t) = try DeclaredCountTests.history(changes: 4)
        let visible = try #require(try Self.spans(of: t, in: d).first { !$0.leaf.spans[$0.index].deleted })
        visible.leaf.spans[visible.index].deleted = true
        DeclaredCountTests.expectMalformed(d)
    }

    @Test func aVisibleItemThatARemoveCoversIsRefused() throws {
        let (d, t) = try DeclaredCountTests.history(changes: 4)
        let deleted = try #require(try Self.spans(of: t, in: d).first { $0.leaf.spans[$0.index].deleted })
        deleted.leaf.spans[deleted.index].deleted = false
        DeclaredCountTests.expectMalformed(d)
    }

    /// Two replicas deleting the same letter concurrently: two removes cover one item, and
    /// the save loads.
    @Test func anItemTwoRemovesCoverLoads() throws {
        let (x, t) = try DeclaredCountTests.history(changes: 4)
        let y = Document(actor: .named("z"))
        try y.apply(x.allChanges())
        try x.change { tx in try tx.splice(t, at: 0, delete: 2) }
        try y.change { tx in try tx.splice(t, at: 1, delete: 1) }
        try x.apply(y.allChanges())
        try DeclaredCountTests.expectLoads(x, text: t)
    }
}
