import Foundation
import ImprintCRDT
import ImprintTestSupport
import Testing

/// `DocumentEncoder` / `DocumentDecoder`: Swift values into maps, lists, text, counters and
/// scalars and back; updates in place (a changed field is one op); collaborative text and
/// counters merge; wrong shapes are typed errors.
@Suite struct CodableDocumentTests {
    enum Status: String, Codable, Hashable { case draft, published }

    struct Section: Codable, Hashable {
        var heading: String
        var body: CollaborativeText
    }

    struct Article: Codable, Hashable {
        var title: String
        var body: CollaborativeText
        var status: Status
        var views: Counter
        var rating: Double
        var pinned: Bool
        var tags: [String]
        var sections: [Section]
        var metadata: [String: String]
        var subtitle: String?
        var updated: Date
        var thumbnail: Data
        var revision: UInt64
    }

    static let article = Article(
        title: "Plans", body: "Hello world", status: .draft, views: 1, rating: 4.5, pinned: false, tags: ["a", "b"],
        sections: [Section(heading: "One", body: "first"), Section(heading: "Two", body: "second")],
        metadata: ["lang": "en"], subtitle: nil, updated: Date(timeIntervalSince1970: 1_700_000_000.123), thumbnail: Data([1, 2, 3]),
        revision: 7)

    static func lastOpCount(_ doc: Document) -> Int { doc.allChanges().last?.opCount ?? 0 }

    @Test func roundTripsEveryKindOfField() throws {
        let doc = Document()
        try DocumentEncoder().encode(Self.article, into: doc)
        #expect(try DocumentDecoder().decode(Article.self, from: doc) == Self.article)
        // Stored as the kinds a collaborator's app would expect.
        #expect(try doc.get(.root, "title") == .scalar(.string("Plans")))
        guard case .object(let body, .text)? = try doc.get(.root, "body") else { Issue.record("body is not text"); return }
        #expect(try doc.text(body) == "Hello world")
        #expect(try doc.get(.root, "views") == .scalar(.counter(1)))
        #expect(try doc.get(.root, "updated") == .scalar(.timestamp(1_700_000_000_123)))
        #expect(try doc.get(.root, "subtitle") == nil, "a nil optional is no key")
        // And through save/load.
        #expect(try DocumentDecoder().decode(Article.self, from: try Document.load(doc.save())) == Self.article)
    }

    @Test func aChangedFieldIsOneOpAndNothingElseIsWritten() throws {
        let doc = Document()
        doc.coalescesLocalChanges = false
        try DocumentEncoder().encode(Self.article, into: doc)
        let changes = doc.allChanges().count
        try DocumentEncoder().encode(Self.article, into: doc)
        #expect(doc.allChanges().count == changes, "encoding the same value writes nothing")

        var edited = Self.article
        edited.title = "Plans for 2027"
        try DocumentEncoder().encode(edited, into: doc)
        #expect(Self.lastOpCount(doc) == 1)

        edited.body.text = "Hello brave world"
        try DocumentEncoder().encode(edited, into: doc)
        #expect(Self.lastOpCount(doc) == 6, "one insert op per code point of \"brave \", no deletes")

        edited.views = 5
        try DocumentEncoder().encode(edited, into: doc)
        #expect(Self.lastOpCount(doc) == 1, "an increment")

        edited.sections[1].heading = "2"
        edited.subtitle = "A subtitle"
        try DocumentEncoder().encode(edited, into: doc)
        #expect(Self.lastOpCount(doc) == 2)

        edited.subtitle = nil
        edited.tags.removeLast()
        try DocumentEncoder().encode(edited, into: doc)
        #expect(Self.lastOpCount(doc) == 2, "the key deleted, the element deleted")
        #expect(try DocumentDecoder().decode(Article.self, from: doc) == edited)
    }

    @Test func concurrentTextEditsAndIncrementsMerge() throws {
        let a = Document()
        try DocumentEncoder().encode(Self.article, into: a)
        let b = try a.fork()
        var onA = try DocumentDecoder().decode(Article.self, from: a)
        var onB = try DocumentDecoder().decode(Article.self, from: b)
        onA.body.text = "Hello brave world"
        onA.views.value += 2
        onA.title = "From A"
        onB.body.text = "Hello world!"
        onB.views.value += 3
        onB.title = "From B"
        try DocumentEncoder().encode(onA, into: a)
        try DocumentEncoder().encode(onB, into: b)
        try a.merge(b)
        try b.merge(a)
        let merged = try DocumentDecoder().decode(Article.self, from: a)
        #expect(merged == (try DocumentDecoder().decode(Article.self, from: b)))
        #expect(merged.body.text == "Hello brave world!", "text merges character by character")
        #expect(merged.views.value == 6, "increments add up")
        #expect(["From A", "From B"].contains(merged.title), "a scalar keeps one writer's value")
    }

    @Test func wrongShapesAreTypedErrors() throws {
        let doc = Document()
        try DocumentEncoder().encode(Self.article, into: doc)
        struct WantsNumberTitle: Decodable { var title: Int }
        do {
            _ = try DocumentDecoder().decode(WantsNumberTitle.self, from: doc)
            Issue.record("decoded a string as an Int")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["title"])
        }
        struct WantsMissing: Decodable { var absent: String }
        #expect(throws: DecodingError.self) { try DocumentDecoder().decode(WantsMissing.self, from: doc) }
        struct WantsSmall: Decodable { var revision: UInt8 }
        let small = Document()
        try DocumentEncoder().encode(["revision": 300], into: small)
        #expect(throws: DecodingError.self) { try DocumentDecoder().decode(WantsSmall.self, from: small) }

        // Only keyed values make a document, and only into a map.
        #expect(throws: EncodingError.self) { try DocumentEncoder().encode(["a", "b"], into: doc) }
        let body = try #require(try doc.get(.root, "body")?.objectID)
        #expect(throws: CRDTError.self) { try DocumentEncoder().encode(Self.article, into: doc, at: body) }
    }

    /// Random values of a nested shape, encoded over each other into one document: the
    /// document always decodes to the last value written.
    @Test func randomValuesRoundTripInPlace() throws {
        let seed = testSeed("CodableDocumentTests.random", fallback: 0xC0DA_B1E5)
        var rng = SplitMix64(seed: seed)
        func word() -> String { String((0..<Int.random(in: 0...6, using: &rng)).map { _ in "aé🙂b ".randomElement(using: &rng)! }) }
        let doc = Document()
        for round in 0..<60 {
            var value = Self.article
            value.title = word()
            value.body.text = word() + word()
            value.status = Bool.random(using: &rng) ? .draft : .published
            value.views = Counter(Int64.random(in: -5...50, using: &rng))
            value.tags = (0..<Int.random(in: 0...4, using: &rng)).map { _ in word() }
            value.sections = (0..<Int.random(in: 0...3, using: &rng)).map { _ in Section(heading: word(), body: CollaborativeText(word())) }
            value.metadata = Dictionary((0..<Int.random(in: 0...3, using: &rng)).map { ("k\($0)", word()) }, uniquingKeysWith: { a, _ in a })
            value.subtitle = Bool.random(using: &rng) ? word() : nil
            value.revision = UInt64.random(in: 0...UInt64.max, using: &rng)
            try DocumentEncoder().encode(value, into: doc)
            #expect(try DocumentDecoder().decode(Article.self, from: doc) == value, "round \(round), seed \(seed)")
        }
    }
}
