import Testing
@testable import ImprintCRDT

/// Hostile saves whose items name origins that replaying the history could not give: an
/// origin that is no item of the text, or one that comes after its item. A loader must
/// refuse each with `.malformed` in every payload layout (the origin checks of
/// `decodePayload`, which find an origin's change only when the origin's actor and counter
/// do not already place it before its item).
@Suite struct OriginCheckTests {
    /// x's text typed one letter a change (counter 1 created the text, items from 2 on),
    /// y's change deleting the second letter; and the text's spans in document order.
    static func history() throws -> (Document, ObjectID, [(leaf: SpanLeaf, index: Int)]) {
        let (d, t) = try DeclaredCountTests.history(changes: 6)
        return (d, t, try DeletedFlagTests.spans(of: t, in: d))
    }

    /// The last span starts after the first item of x, so its left origin is an earlier item.
    @Test func anOriginThatIsAnotherOpOfTheSameActorIsRefused() throws {
        let (d, _, spans) = try Self.history()
        let last = try #require(spans.last)
        let id = last.leaf.spans[last.index].id
        #expect(id.counter > 2)
        // Counter 1 of x created the text: an op, not an item.
        last.leaf.spans[last.index].left = OpID(counter: 1, actor: id.actor)
        DeclaredCountTests.expectMalformed(d)
    }

    @Test func anOriginThatIsALaterItemOfTheSameActorIsRefused() throws {
        let (d, _, spans) = try Self.history()
        let first = try #require(spans.first)
        let id = first.leaf.spans[first.index].id
        #expect(id.counter == 2)
        first.leaf.spans[first.index].left = OpID(counter: 3, actor: id.actor)
        DeclaredCountTests.expectMalformed(d)
    }

    /// x types "ab", then y, having synced, types "c" after them: x's first item cannot
    /// follow y's item, which a later change made.
    @Test func anOriginInALaterChangeOfAnotherActorIsRefused() throws {
        let x = Document(actor: .named("x"))
        let t = try x.change { tx in
            let t = try tx.put(.root, "t", .text)!
            try tx.splice(t, at: 0, insert: "ab")
            return t
        }
        let y = Document(actor: .named("y"))
        try y.apply(x.allChanges())
        try y.change { tx in try tx.splice(t, at: 2, insert: "c") }
        try x.apply(y.allChanges())
        let spans = try DeletedFlagTests.spans(of: t, in: x)
        let first = try #require(spans.first), last = try #require(spans.last)
        let yItem = last.leaf.spans[last.index].id
        #expect(yItem.actor != first.leaf.spans[first.index].id.actor)
        first.leaf.spans[first.index].right = yItem
        DeclaredCountTests.expectMalformed(x)
    }

    @Test func theUntamperedHistoryLoads() throws {
        let (d, t, _) = try Self.history()
        try DeclaredCountTests.expectLoads(d, text: t)
    }
}
