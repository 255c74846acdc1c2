import Foundation
@testable import ImprintDelivery
import ImprintTestSupport
import Testing

@Suite struct RFC3339Tests {
    private func expectSameAsFoundation(_ date: Date, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            RFC3339.string(from: date) == RFC3339.foundationString(from: date),
            "\(date.timeIntervalSinceReferenceDate)", sourceLocation: sourceLocation)
    }

    @Test func knownTexts() {
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 1_763_717_400.1235)) == "2025-11-21T09:30:00.123Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 253_402_300_799)) == "9999-12-31T23:59:59.000Z")
    }

    @Test func fastPathCoversOnly1970Through9999() {
        #expect(RFC3339.Fields(Date(timeIntervalSince1970: -0.001)) == nil)
        #expect(RFC3339.Fields(Date(timeIntervalSince1970: 0)) != nil)
        #expect(RFC3339.Fields(Date(timeIntervalSince1970: 253_402_300_799.999)) != nil)
        #expect(RFC3339.Fields(Date(timeIntervalSince1970: 253_402_300_800)) == nil)
        #expect(RFC3339.Fields(Date(timeIntervalSinceReferenceDate: .nan)) == nil)
        #expect(RFC3339.Fields(Date.distantFuture) != nil)  // 4001-01-01
        #expect(RFC3339.Fields(Date.distantPast) == nil)
    }

    @Test func outOfRangeTimesUseFoundation() {
        expectSameAsFoundation(Date.distantFuture)
        expectSameAsFoundation(Date.distantPast)
        for seconds in [-62_135_596_801.0, -1.5, -0.0005, 253_402_300_800.0, 1e12] {
            expectSameAsFoundation(Date(timeIntervalSince1970: seconds))
        }
    }

    /// Random times over the whole range, times stored as milliseconds (what reads format),
    /// and times just around millisecond, second, day and year boundaries, where truncation
    /// of the binary fraction is easiest to get wrong.
    @Test func sameTextAsFoundation() {
        var random = SplitMix64(seed: 0x9E37_79B9_7F4A_7C15)
        for _ in 0..<20_000 {
            expectSameAsFoundation(Date(timeIntervalSince1970: Double.random(in: 0..<253_402_300_800, using: &random)))
            let millis = Int64.random(in: 0..<253_402_300_800_000, using: &random)
            expectSameAsFoundation(Date(timeIntervalSince1970: Double(millis) / 1000))
            let recent = Double.random(in: 1_700_000_000..<1_900_000_000, using: &random)
            expectSameAsFoundation(Date(timeIntervalSince1970: recent))
        }
        for boundary in [0.0, 951_782_400, 978_307_200, 1_763_717_400, 4_102_444_800, 253_402_300_799] {
            var below = boundary + 1
            var above = boundary
            for _ in 0..<64 {
                below = below.nextDown
                above = above.nextUp
                expectSameAsFoundation(Date(timeIntervalSince1970: below))
                expectSameAsFoundation(Date(timeIntervalSince1970: above))
            }
            for millis in stride(from: -3.0, through: 3, by: 1) {
                expectSameAsFoundation(Date(timeIntervalSince1970: boundary + millis / 1000))
            }
        }
    }
}
