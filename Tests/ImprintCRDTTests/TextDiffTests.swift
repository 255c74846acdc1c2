import Testing
@testable import ImprintCRDT
import ImprintTestSupport

@Suite struct TextDiffTests {
    @Test func identicalTextsNeedNoSplice() {
        #expect(TextDiff(from: "same", to: "same").splices.isEmpty)
    }

    @Test func minimalSplicesForSeparatedEdits() {
        let diff = TextDiff(from: "The quick brown fox", to: "The slow brown dog")
        #expect(diff.applied(to: "The quick brown fox") == "The slow brown dog")
        // Edit distance (insertions + deletions of code points): quick->slow 9, f->d and x->g 4.
        let size = diff.splices.map { $0.deleteCount + $0.insert.unicodeScalars.count }.reduce(0, +)
        #expect(size == 13)
        #expect(diff.splices.count == 3)
    }

    @Test func countsCodePointsNotGraphemes() {
        let old = "e\u{301}👍🏽 café"
        let new = "e\u{301}👍 cafés"
        let diff = TextDiff(from: old, to: new)
        #expect(diff.applied(to: old) == new)
        #expect(diff.splices.first?.position == 3)  // after e, U+0301, 👍
    }

    @Test func randomPairsRoundTrip() {
        let seed = testSeed("TextDiffTests.randomPairsRoundTrip", fallback: 0x5EED_D1FF)
        var rng = SplitMix64(seed: seed)
        let alphabet = Array("ab cdé\n🙂")
        for _ in 0..<300 {
            let a = String((0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            let b = String((0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
            let diff = TextDiff(from: a, to: b)
            #expect(diff.applied(to: a) == b)
            let bounded = TextDiff(from: a, to: b, maxEditDistance: 2)
            #expect(bounded.applied(to: a) == b)
        }
    }
}
