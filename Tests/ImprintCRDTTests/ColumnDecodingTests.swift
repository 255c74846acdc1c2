import ImprintEncoding
import ImprintTestSupport
import Testing
@testable import ImprintCRDT

/// The bulk column readers and the change-range table a load decodes with must answer
/// exactly what their one-at-a-time counterparts answer, errors included.
@Suite struct ColumnDecodingTests {
    /// Random varints of every length (most of them one byte, as in saved columns).
    private func randomValues(_ n: Int, _ rng: inout SplitMix64) -> [UInt64] {
        (0..<n).map { _ in
            switch rng.next() % 4 {
            case 0, 1: rng.next() % 128
            case 2: rng.next() % 100_000
            default: rng.next() >> (rng.next() % 64)
            }
        }
    }

    @Test func countsAndSlebsMatchSingleReads() throws {
        var rng = SplitMix64(seed: testSeed("countsAndSlebsMatchSingleReads", fallback: 15))
        for _ in 0..<50 {
            let values = randomValues(Int(rng.next() % 300), &rng)
            var w = ByteWriter()
            for v in values { w.uleb(v) }
            let limit = Int(rng.next() % 2 == 0 ? UInt64(Int.max) : rng.next() % 200_000)
            // One at a time, the reference.
            var one = ByteReader(w.bytes)
            var expected: [Int] = []
            var expectedError: CRDTError.Code?
            do {
                for _ in values { expected.append(try one.count(max: limit)) }
            } catch let e as CRDTError { expectedError = e.code }
            var bulk = ByteReader(w.bytes)
            do {
                let got = try bulk.counts(values.count, max: limit)
                #expect(expectedError == nil)
                #expect(got == expected)
                #expect(bulk.isAtEnd)
            } catch let e as CRDTError {
                #expect(e.code == expectedError)
            }
            var signed = ByteReader(w.bytes)
            #expect(try signed.slebs(values.count) == values.map { LEB128.zigzagDecode($0) })
            #expect(signed.isAtEnd)
        }
    }

    @Test func bulkReadsThrowOnShortOrBadInput() throws {
        var w = ByteWriter()
        for v: UInt64 in [1, 300, 5] { w.uleb(v) }
        var short = ByteReader(w.bytes)
        #expect(throws: CRDTError.self) { try short.counts(4, max: 1000) }
        var truncated = ByteReader(Array(w.bytes.dropLast(2)) + [0x80])
        #expect(throws: CRDTError.self) { try truncated.slebs(3) }
        var nonMinimal = ByteReader([0x81, 0x00])
        #expect(throws: CRDTError.self) { try nonMinimal.counts(1, max: 1000) }
        // A hostile count reserves no more than the bytes that remain.
        var huge = ByteReader([1, 2, 3])
        #expect(throws: CRDTError.self) { try huge.counts(Int.max / 2, max: 10) }
        // A slice: reads stop at its end, not the array's.
        var slice = ByteReader([1, 2, 3, 4], offset: 1, end: 3)
        #expect(try slice.counts(2, max: 10) == [2, 3])
        #expect(throws: CRDTError.self) { try slice.counts(1, max: 10) }
    }

    @Test func changeRangesLocateLikeALinearScan() {
        var rng = SplitMix64(seed: testSeed("changeRangesLocateLikeALinearScan", fallback: 15))
        for _ in 0..<30 {
            let actorCount = 1 + Int(rng.next() % 4)
            // Changes in application order; each actor's counters ascend with gaps. Half of
            // them continue the change before (same actor and op count, the next counters),
            // so runs that share a range are frequent, and end in every way one can.
            var next = [Int](repeating: 1, count: actorCount)
            var changes: [(actor: Int32, startOp: Int, maxOp: Int)] = []
            for _ in 0..<Int(rng.next() % 120) {
                if let previous = changes.last, rng.next() % 2 == 0 {
                    let ops = previous.maxOp - previous.startOp + 1
                    changes.append((previous.actor, previous.maxOp + 1, previous.maxOp + ops))
                    next[Int(previous.actor)] = previous.maxOp + ops + 1
                    continue
                }
                let a = Int(rng.next() % UInt64(actorCount))
                let start = next[a] + Int(rng.next() % 3)
                let ops = 1 + Int(rng.next() % 4)
                changes.append((Int32(a), start, start + ops - 1))
                next[a] = start + ops
            }
            var ranges = ChangeRanges(actorCount: actorCount, changes: changes.indices) { changes[$0] }
            let maxCounter = next.max()! + 2
            for indexed in [false, true] {
                if indexed { ranges.indexCounters(budget: 1 << 20, minChanges: Int(rng.next() % 8)) }
                var hints = [Int](repeating: 0, count: actorCount)
                for a in 0..<actorCount {
                    for c in 0...maxCounter {
                        let expected = changes.indices.first { changes[$0].actor == Int32(a) && changes[$0].startOp <= c && c <= changes[$0].maxOp }
                        let found = ranges.locate(actor: Int32(a), counter: c, hint: &hints[a])
                        #expect(found?.record == expected, "actor \(a) counter \(c) indexed \(indexed)")
                        if let e = expected { #expect(found?.end == changes[e].maxOp) }
                    }
                }
                var hint = 0
                #expect(ranges.locate(actor: Int32(actorCount), counter: 1, hint: &hint) == nil)
                #expect(ranges.locate(actor: -1, counter: 1, hint: &hint) == nil)
            }
        }
    }
}
