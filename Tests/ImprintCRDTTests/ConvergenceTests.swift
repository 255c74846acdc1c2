import Foundation
import ImprintEncoding
import Testing
@testable import ImprintCRDT
import ImprintTestSupport

/// Property-based convergence: random edits on 3–5 replicas, random partial syncs in
/// random orders with duplicates; every replica must end identical, match the naive
/// reference sequence, and survive save/load.
///
/// `IMPRINT_TEST_SEED` moves the run to other histories (case `c` uses seed + c) and
/// `IMPRINT_TEST_ITERATIONS` widens it (default 1,500 cases); the test command sets a new
/// seed on every CI run and prints it.
@Suite struct ConvergenceTests {
    static let cases = ProcessInfo.processInfo.environment["IMPRINT_TEST_ITERATIONS"].flatMap { Int($0) } ?? 1500

    @Test func randomReplicasConverge() throws {
        let base = testSeed("ConvergenceTests.randomReplicasConverge (\(Self.cases) cases)", fallback: 0x1A2B_0000)
        var failures = 0
        for c in 0..<Self.cases {
            let seed = base &+ UInt64(c)
            do {
                try Self.runCase(seed: seed)
            } catch {
                failures += 1
                Issue.record("convergence case failed with seed \(seed): \(error)")
                if failures > 3 { return }
            }
        }
    }

    struct CaseFailure: Error, CustomStringConvertible {
        var description: String
    }

    static func runCase(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let n = Int.random(in: 3...5, using: &rng)
        let replicas = (0..<n).map { i in Document(actor: ActorID(bytes: [UInt8(i + 1), UInt8.random(in: 0...255, using: &rng)])!) }
        // Tiny leaves, so small documents still span many leaves and exercise leaf splits.
        for r in replicas { r.leafCapacity = 3 }
        // Shared structure made by replica 0.
        let (text, list) = try replicas[0].change { tx in
            (try tx.put(.root, "text", .text)!, try tx.put(.root, "list", .list)!)
        }
        for r in replicas.dropFirst() { try r.apply(replicas[0].allChanges()) }
        for r in replicas { r.coalescesLocalChanges = Bool.random(using: &rng) }
        let alphabet = Array("abcdefghijkl é😀")
        let rounds = Int.random(in: 2...6, using: &rng)
        for _ in 0..<rounds {
            for r in replicas {
                for _ in 0..<Int.random(in: 0...6, using: &rng) {
                    try r.change { tx in
                        let len = try r.length(text)
                        switch Int.random(in: 0..<10, using: &rng) {
                        case 0..<5:
                            let s = String((0..<Int.random(in: 1...4, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
                            try tx.splice(text, at: Int.random(in: 0...len, using: &rng), insert: s)
                        case 5..<7 where len > 0:
                            let at = Int.random(in: 0..<len, using: &rng)
                            try tx.splice(text, at: at, delete: Int.random(in: 1...min(3, len - at), using: &rng))
                        case 7:
                            try tx.put(.root, "k\(Int.random(in: 0..<3, using: &rng))", .scalar(.int(Int64.random(in: 0..<100, using: &rng))))
                        case 8:
                            let ll = try r.length(list)
                            if ll > 0 && Bool.random(using: &rng) {
                                try tx.delete(list, at: Int.random(in: 0..<ll, using: &rng))
                            } else {
                                try tx.insert(list, at: Int.random(in: 0...ll, using: &rng), .scalar(.int(Int64(ll))))
                            }
                        default:
                            if Bool.random(using: &rng) { try tx.delete(.root, "k\(Int.random(in: 0..<3, using: &rng))") }
                        }
                    }
                }
            }
            // Random partial syncs: some pairs exchange a random subset, in random order, with repeats.
            for _ in 0..<Int.random(in: 0...n, using: &rng) {
                let a = replicas.randomElement(using: &rng)!
                let b = replicas.randomElement(using: &rng)!
                guard a !== b else { continue }
                var changes = a.changes(since: b.currentHeads)
                changes.shuffle(using: &rng)
                let k = Int.random(in: 0...changes.count, using: &rng)
                try b.apply(Array(changes.prefix(k)) + Array(changes.prefix(k / 2)))
            }
        }
        // Full sync everywhere, in shuffled order.
        let all = Array(Set(replicas.flatMap { $0.allChanges() }))
        for r in replicas {
            var mine = all
            mine.shuffle(using: &rng)
            try r.apply(mine)
            guard r.pendingChangeCount == 0 else { throw CaseFailure(description: "changes left pending") }
        }
        let expectedJSON = try replicas[0].jsonValue()
        let expectedHeads = replicas[0].currentHeads
        // The naive references, fed the same history in causal order, must read the same
        // text, list and root map (every key, its winning value) as the engine.
        var referenceText = ReferenceSequence(), referenceList = ReferenceSequence(), referenceRoot = ReferenceMap()
        for ch in replicas[0].allChanges() {
            referenceText.apply(ch, sequence: text)
            referenceList.apply(ch, sequence: list)
            referenceRoot.apply(ch)
        }
        let expectedText = try replicas[0].text(text)
        guard referenceText.text == expectedText else {
            throw CaseFailure(description: "engine text \(expectedText.debugDescription) != reference \(referenceText.text.debugDescription)")
        }
        var referenceJSON: [String: JSONValue] = [:]
        for (key, value) in referenceRoot.winners {
            switch key {
            case "text": referenceJSON[key] = .string(referenceText.text)
            case "list": referenceJSON[key] = .array(referenceList.elements)
            default: referenceJSON[key] = ReferenceSequence.json(value)
            }
        }
        guard expectedJSON == .object(referenceJSON) else {
            throw CaseFailure(description: "engine \(expectedJSON) != reference \(JSONValue.object(referenceJSON))")
        }
        for r in replicas {
            guard try r.jsonValue() == expectedJSON, r.currentHeads == expectedHeads, try r.text(text) == expectedText else {
                throw CaseFailure(description: "replica diverged: \(try r.text(text).debugDescription) vs \(expectedText.debugDescription)")
            }
        }
        let reloaded = try Document.load(replicas[0].save())
        guard try reloaded.jsonValue() == expectedJSON, reloaded.currentHeads == expectedHeads else {
            throw CaseFailure(description: "save/load changed the document")
        }
        // A fresh replica built by applying the reloaded document's changes agrees too.
        let rebuilt = Document()
        try rebuilt.apply(reloaded.allChanges())
        guard try rebuilt.jsonValue() == expectedJSON else { throw CaseFailure(description: "rebuilt from changes differs") }
    }
}
