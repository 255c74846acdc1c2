import Foundation
import ImprintServerTestSupport
import ImprintSync
import ImprintTestSupport
import Testing

/// Out-of-order, missing and late records: a seq the Delivery Service sequenced whose record
/// a reader cannot see yet is a gap; later messages are still applied (the engine waits for
/// their dependencies), the gap is reported with its age, and it fills when the record shows up.
extension SyncSuites {
@Suite struct GapTests {
    @Test(arguments: StoreKind.available)
    func aGapThatFillsBeforeTheTimeout(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let withholding = WithholdingZoneStore(bob.account.zones)
            let bobBase = try await bob.join(aliceDoc.convoId)
            _ = bobBase
            let bobDoc = try await SharedDocument.open(bundleAt: bob.bundlePath, device: bob.device, account: bob.account.with(zones: withholding))

            var seqs: [Int] = []
            for (index, word) in ["one ", "two ", "three "].enumerated() {
                try alice.edit { try $0.insert(word, at: try $0.text().count) }
                let report = try await aliceDoc.push()
                seqs.append(try #require(report.seq, "push \(index) sent a message"))
            }
            // The middle message's records are late.
            try await withholding.withhold(convoId: aliceDoc.convoId, seq: seqs[1])
            let first = try await bobDoc.pull()
            #expect(first.gaps == [seqs[1]])
            #expect(first.messages == 2, "the messages around the gap are applied")
            #expect(try bob.text() == "one ", "the third edit waits for the second (its dependency)")
            let waiting = await bobDoc.status()
            #expect(waiting.gaps.map(\.seq) == [seqs[1]] && waiting.processedSeq == seqs[0] && waiting.bufferedSeqs == [seqs[2]])
            #expect(waiting.waitingChanges == 1)

            // Duplicated delivery: pulling again changes nothing.
            #expect(try await bobDoc.pull().messages == 0)

            withholding.release(convoId: aliceDoc.convoId, seq: seqs[1])
            let second = try await bobDoc.pull()
            #expect(second.gaps.isEmpty && second.messages == 1)
            #expect(try bob.text() == "one two three ")
            let caughtUp = await bobDoc.status()
            #expect(caughtUp.gaps.isEmpty && caughtUp.bufferedSeqs.isEmpty && caughtUp.processedSeq == seqs[2] && caughtUp.waitingChanges == 0)
        }
    }

    /// A member far behind catches up from the Delivery Service's order and the zone.
    @Test(arguments: StoreKind.available)
    func aMemberManyChangesBehindCatchesUp(kind: StoreKind) async throws {
        let messages = Int(ProcessInfo.processInfo.environment["IMPRINT_SYNC_BEHIND_MESSAGES"] ?? "") ?? 100
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            // 10 changes per message.
            for message in 0..<messages {
                try alice.edit { bundle in
                    for change in 0..<10 { try bundle.insert("\(message).\(change) ", at: try bundle.text().count) }
                }
                try await aliceDoc.push()
            }
            let started = ContinuousClock.now
            let report = try await bobDoc.pull()
            print("GapTests.\(kind): caught up \(messages) messages (\(messages * 10) changes) in \(ContinuousClock.now - started)")
            #expect(report.messages == messages && report.changes == messages * 10)
            #expect(try bob.text() == alice.text())
        }
    }
}
}
