import Testing
@testable import ImprintCRDT
import ImprintTestSupport

/// `ChangeRanges` answers which change holds an op's counter. A loader builds it while it
/// decodes the headers (`ChangeRanges.Builder`): change by change, or a stretch of equal
/// changes at once for the rest of a version 5 run. Whichever way it is fed, and with or
/// without the O(1) counter tables, every lookup must name the change that holds the counter.
@Suite struct ChangeRangesTests {
    /// The counters one change holds, of one actor.
    struct Held {
        var actor: Int32
        var startOp: Int
        var maxOp: Int
    }

    /// Changes of `actors` actors in application order: turns of one actor (often several
    /// changes of the same width in a row, as typing makes), empty changes, gaps between an
    /// actor's counters (other actors' ops took them), widths from 0 to 3.
    static func changes(seed: UInt64, actors: Int) -> [Held] {
        var rng = SplitMix64(seed: seed)
        var next = [Int](repeating: 1, count: actors)
        var out: [Held] = []
        for _ in 0..<Int.random(in: 20...200, using: &rng) {
            let a = Int.random(in: 0..<actors, using: &rng)
            if Int.random(in: 0..<3, using: &rng) == 0 { next[a] += Int.random(in: 1...5, using: &rng) }
            let width = Int.random(in: 0...3, using: &rng)
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                let w = Int.random(in: 0..<5, using: &rng) == 0 ? Int.random(in: 0...3, using: &rng) : width
                out.append(Held(actor: Int32(a), startOp: next[a], maxOp: next[a] + w - 1))
                next[a] += w
            }
        }
        return out
    }

    /// The change holding each counter of each actor, and its last counter, found by
    /// walking every change's counters.
    static func owners(_ changes: [Held]) -> [Int32: [Int: (record: Int, end: Int)]] {
        var owners: [Int32: [Int: (record: Int, end: Int)]] = [:]
        for (i, c) in changes.enumerated() where c.startOp <= c.maxOp {
            for counter in c.startOp...c.maxOp { owners[c.actor, default: [:]][counter] = (i, c.maxOp) }
        }
        return owners
    }

    /// Builds the ranges the way `HeaderTable.appendRunRest` does: a run's consecutive
    /// changes of one width as one stretch (`add(actor:record:startOp:width:count:)`),
    /// everything else change by change.
    static func byStretches(_ changes: [Held], actors: Int) -> ChangeRanges {
        var builder = ChangeRanges.Builder()
        var i = 0
        while i < changes.count {
            let c = changes[i]
            let width = c.maxOp - c.startOp + 1
            var n = 1
            while width >= 1, i + n < changes.count, changes[i + n].actor == c.actor,
                  changes[i + n].startOp == changes[i + n - 1].maxOp + 1, changes[i + n].maxOp - changes[i + n].startOp + 1 == width {
                n += 1
            }
            if width >= 1 {
                builder.add(actor: c.actor, record: i, startOp: c.startOp, width: width, count: n)
            } else {
                builder.add(actor: c.actor, record: i, startOp: c.startOp, maxOp: c.maxOp)
            }
            i += n
        }
        return builder.build(actorCount: actors)
    }

    @Test func everyLookupNamesTheChangeHoldingTheCounter() {
        let seed = testSeed("ChangeRangesTests.everyLookup", fallback: 0x5EED_0601)
        for round in UInt64(0)..<40 {
            let actors = 1 + Int(round % 4)
            let changes = Self.changes(seed: seed &+ round, actors: actors)
            let perChange = ChangeRanges(actorCount: actors, changes: changes.indices) {
                (changes[$0].actor, changes[$0].startOp, changes[$0].maxOp)
            }
            var indexed = Self.byStretches(changes, actors: actors)
            // Tables for every actor with more than one range (the loader's threshold is 32).
            indexed.indexCounters(budget: 1 << 20, minChanges: 1)
            let stretched = Self.byStretches(changes, actors: actors)
            let top = (changes.map(\.maxOp).max() ?? 0) + 3
            let owners = Self.owners(changes)
            for ranges in [perChange, stretched, indexed] {
                var hints = [Int](repeating: 0, count: actors)
                for a in 0..<Int32(actors) {
                    for counter in 0...top {
                        let found = ranges.locate(actor: a, counter: counter, hint: &hints[Int(a)])
                        let expected = owners[a]?[counter]
                        #expect(found?.record == expected?.record && found?.end == expected?.end,
                                "seed \(seed &+ round): actor \(a) counter \(counter): \(String(describing: found)) vs \(String(describing: expected))")
                    }
                }
            }
            // Stretches join exactly as changes one by one do.
            var perChangeRanges: [[Int]] = [], stretchedRanges: [[Int]] = []
            perChange.forEachRange { perChangeRanges.append([$0, $1, $2]) }
            stretched.forEachRange { stretchedRanges.append([$0, $1, $2]) }
            #expect(perChangeRanges == stretchedRanges, "seed \(seed &+ round)")
            #expect(perChangeRanges.count < changes.count || changes.count <= 1, "seed \(seed &+ round): equal changes in a row share ranges")
        }
    }
}
