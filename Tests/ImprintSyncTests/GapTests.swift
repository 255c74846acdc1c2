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

    /// A gap that never fills: after `gapTimeout` Bob asks the member whose message is missing
    /// (a `syncRequest` naming Alice, through the engine's sync protocol), Alice answers at her
    /// next pull, and Bob's next pull brings the missing edit; his gap is gone and his cursor
    /// passes it. Carol, not named, answers nothing and still applies the answer.
    @Test(arguments: StoreKind.available)
    func aGapThatNeverFillsIsAskedForAndRecovered(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            var quick = SyncOptions()
            quick.gapTimeout = .milliseconds(200)
            let alice = try await server.person("alice"), bob = try await server.person("bob", options: quick)
            let carol = try await server.person("carol")
            try alice.createBundle(text: "")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did, carol.did])
            let withholding = WithholdingZoneStore(bob.account.zones)
            _ = try await bob.join(aliceDoc.convoId)
            let carolDoc = try await carol.join(aliceDoc.convoId)
            let bobDoc = try await SharedDocument.open(bundleAt: bob.bundlePath, device: bob.device, account: bob.account.with(zones: withholding))

            var seqs: [Int] = []
            for (index, word) in ["one ", "two ", "three "].enumerated() {
                try alice.edit { try $0.insert(word, at: try $0.text().count) }
                seqs.append(try #require(try await aliceDoc.push().seq, "push \(index) sent a message"))
            }
            // The middle message's records never reach Bob.
            try await withholding.withhold(convoId: aliceDoc.convoId, seq: seqs[1])
            #expect(try await bobDoc.pull().gaps == [seqs[1]])
            #expect(try bob.text() == "one ")

            // Past the timeout, Bob's pull asks Alice; before it, nothing is asked.
            try await Task.sleep(for: .milliseconds(300))
            let asking = try await bobDoc.pull()
            #expect(asking.gaps == [seqs[1]], "the gap stays until the answer")
            let afterRequest = try await aliceDoc.pull()
            #expect(afterRequest.messages == 1, "Alice read Bob's request")
            #expect(try await carolDoc.pull().messages >= 1)

            let recovered = try await bobDoc.pull()
            #expect(recovered.gaps.isEmpty)
            #expect(try bob.text() == "one two three ")
            let status = await bobDoc.status()
            #expect(status.gaps.isEmpty && status.bufferedSeqs.isEmpty && status.waitingChanges == 0)
            #expect(status.processedSeq >= seqs[2], "the cursor passed the gap")
            // Who sent what: Bob one request, Alice one answer, Carol nothing.
            let messages = try await bob.account.delivery.getMessages(convoId: aliceDoc.convoId, sinceSeq: seqs[2], limit: 100).messages
            #expect(messages.filter { $0.sender == bob.did }.count == 1)
            #expect(messages.filter { $0.sender == alice.did }.count == 1)
            #expect(messages.filter { $0.sender == carol.did }.isEmpty)
            _ = try await carolDoc.pull()
            #expect(try carol.text() == "one two three ")
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
