import Foundation
import ImprintCRDT
import ImprintDelivery
import ImprintServerTestSupport
@testable import ImprintSync
import Testing

/// Previews: a member watching the document sees an edit before the sender's durable send has
/// finished; the durable copy then changes nothing more, nothing shows twice, and a preview
/// that is forged, replayed, of another epoch or damaged is dropped.
extension SyncSuites {
@Suite struct PreviewTests {
    struct TimeoutError: Error {}

    /// Waits until `watcher`'s ephemeral stream is open: `sender` sends presence every 100 ms
    /// until `events` yields it (a relayed message reaches only streams open at the time).
    static func waitForEphemeralStream(from sender: SharedDocument,
                                       events: inout AsyncThrowingStream<LiveEvent, any Error>.AsyncIterator) async throws {
        let presence = Task {
            while !Task.isCancelled {
                try await sender.sendPresence(at: 0)
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        defer { presence.cancel() }
        while true {
            let event = try #require(try await events.next())
            if case .presence = event { return }
        }
    }

    /// Waits up to 30 s until `tap` holds at least `count` previews.
    static func waitForPreviews(_ tap: PreviewTapDeliveryService.Tap, count: Int) async throws -> [SendEphemeralInput] {
        for _ in 0..<3000 where tap.previews.count < count { try await Task.sleep(for: .milliseconds(10)) }
        let previews = tap.previews
        try #require(previews.count >= count, "\(previews.count) previews sent, \(count) expected")
        return previews
    }

    /// Reads `view` until the text it describes has grown by `count` characters, or throws
    /// after 30 s.
    static func waitForGrowth(_ view: AsyncStream<PatchBatch>, by count: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var grown = 0
                for await batch in view where batch.origin == .remote {
                    for case let .splice(_, _, text) in batch.patches { grown += text.count }
                    if grown >= count { return }
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                throw TimeoutError()
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Alice shares "Hello" with Bob; her document is reopened behind a preview tap.
    static func tappedPair(_ server: SyncTestServer) async throws
        -> (aliceDoc: SharedDocument, bobDoc: SharedDocument, tapped: PreviewTapDeliveryService, alice: Person, bob: Person)
    {
        let alice = try await server.person("alice"), bob = try await server.person("bob")
        try alice.createBundle(text: "Hello")
        let aliceBase = try await alice.share()
        try await aliceBase.invite([bob.did])
        let bobDoc = try await bob.join(aliceBase.convoId)
        let tapped = PreviewTapDeliveryService(real: alice.account.delivery)
        let aliceDoc = try await SharedDocument.open(bundleAt: alice.bundlePath, device: alice.device,
                                                     account: alice.account.with(delivery: tapped))
        return (aliceDoc, bobDoc, tapped, alice, bob)
    }

    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.available)
    func anEditShowsBeforeItsDurableSendFinishes(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let (aliceDoc, bobDoc, tapped, alice, bob) = try await Self.tappedPair(server)
            var bobEvents = bobDoc.live(pollInterval: .milliseconds(50)).makeAsyncIterator()
            try await Self.waitForEphemeralStream(from: aliceDoc, events: &bobEvents)
            let processedBefore = await bobDoc.status().processedSeq
            let view = await bobDoc.patches()

            // The edit is relayed as it is made: Bob sees it with no push under way.
            try await aliceDoc.edit { try $0.insert(" world", at: 5) }
            try await Self.waitForGrowth(view, by: 6)
            #expect(try await bobDoc.text() == "Hello world")
            #expect(await bobDoc.status().processedSeq == processedBefore, "nothing durable moved for the preview")
            #expect(await bobDoc.appliedPreviews == 1)
            #expect(try bob.text() == "Hello", "the bundle on disk has not taken it yet")

            // The push sends the durable copy and no second preview; the text does not change
            // again, and it is on disk.
            let report = try await aliceDoc.push()
            #expect(tapped.tap.previews.count == 1, "the edit's preview covered the push")
            let seq = try #require(report.seq)
            while await bobDoc.status().processedSeq < seq {
                _ = try #require(try await bobEvents.next())
            }
            #expect(try await bobDoc.text() == "Hello world")
            #expect(try bob.text() == "Hello world")
            #expect(try await bobDoc.push().changes == 0, "Alice's change is not Bob's to send")

            // An edit that reached the bundle another way (another process) is previewed by
            // the push that sends it, before its durable send: held at sendMessage here.
            try alice.edit { try $0.insert("!", at: 11) }
            tapped.tap.hold()
            let push = Task { try await aliceDoc.push() }
            try await Self.waitForGrowth(view, by: 1)
            #expect(try await bobDoc.text() == "Hello world!")
            #expect(try bob.text() == "Hello world", "the durable copy is held")
            tapped.tap.release()
            let last = try #require(try await push.value.seq)
            while await bobDoc.status().processedSeq < last {
                _ = try #require(try await bobEvents.next())
            }
            #expect(try bob.text() == "Hello world!")
            #expect(await bobDoc.appliedPreviews == 2)
        }
    }

    /// Only a preview sealed in the receiver's epoch, signed by a member who is the sender the
    /// Delivery Service names, is merged; each other is counted as dropped. A replay merges
    /// nothing new, before and after the durable copy.
    @Test(.timeLimit(.minutes(3))) func forgedDamagedAndOtherEpochPreviewsAreDropped() async throws {
        try await SyncTestServer.with(.sqlite) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob"), carol = try await server.person("carol")
            try alice.createBundle(text: "Hello")
            let aliceBase = try await alice.share()
            try await aliceBase.invite([bob.did, carol.did])
            let bobDoc = try await bob.join(aliceBase.convoId)
            _ = try await carol.join(aliceBase.convoId)
            let tapped = PreviewTapDeliveryService(real: alice.account.delivery)
            tapped.tap.forwardPreviews = false
            let aliceDoc = try await SharedDocument.open(bundleAt: alice.bundlePath, device: alice.device,
                                                         account: alice.account.with(delivery: tapped))
            try await aliceDoc.edit { try $0.insert("!", at: 5) }
            let pushed = try await aliceDoc.push()
            // The preview leaves on a task of its own: wait for it.
            let preview = try await Self.waitForPreviews(tapped.tap, count: 1)[0]
            let convo = aliceBase.convoId
            func message(_ data: Data = preview.data, from sender: String? = nil, epoch: Int = preview.epoch,
                         kind: String? = EphemeralKind.preview) -> EphemeralMessage {
                EphemeralMessage(convoId: convo, sender: sender ?? alice.did, epoch: epoch, data: data, kind: kind)
            }

            #expect(await bobDoc.applyPreview(message(from: carol.did)) == false, "relayed as someone else's")
            #expect(await bobDoc.applyPreview(message(epoch: preview.epoch + 1)) == false, "claims another epoch")
            #expect(await bobDoc.applyPreview(message(kind: EphemeralKind.presence)) == false, "not a preview")
            var flipped = preview.data
            flipped[flipped.count - 5] ^= 1
            #expect(await bobDoc.applyPreview(message(flipped)) == false, "damaged")
            #expect(await bobDoc.applyPreview(message(Data([0, 1, 0, 2]))) == false, "not a sealed preview")
            #expect(await bobDoc.droppedPreviews == 5)
            #expect(try await bobDoc.text() == "Hello")

            #expect(await bobDoc.applyPreview(message()) == true)
            #expect(try await bobDoc.text() == "Hello!")
            #expect(await bobDoc.applyPreview(message()) == true, "a repeat before the durable copy merges nothing new")
            #expect(try await bobDoc.text() == "Hello!")

            // After the durable copy, a replay still merges nothing new.
            let pulled = try await bobDoc.pull()
            #expect(pulled.seq >= (pushed.seq ?? .max))
            #expect(await bobDoc.applyPreview(message()) == true)
            #expect(try await bobDoc.text() == "Hello!")
            #expect(try await bobDoc.push().changes == 0)

            // After a commit Bob has processed, Alice's old-epoch previews are dropped.
            try await aliceDoc.edit { try $0.insert("?", at: 6) }
            _ = try await aliceDoc.push()
            let older = try await Self.waitForPreviews(tapped.tap, count: 2)[1]
            try await aliceDoc.remove(carol.did)
            _ = try await bobDoc.pull()
            #expect(await bobDoc.applyPreview(message(older.data, epoch: older.epoch)) == false)
            #expect(await bobDoc.droppedPreviews == 6)
            #expect(try await bobDoc.text() == "Hello!?", "the durable copy brought it")
        }
    }

    /// A member's push leaves out changes it holds only from another member's preview (their
    /// author is delivering them) and still sends its own.
    @Test(.timeLimit(.minutes(3))) func previewedChangesAreLeftToTheirAuthor() async throws {
        try await SyncTestServer.with(.sqlite) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob"), carol = try await server.person("carol")
            try alice.createBundle(text: "abc")
            let aliceBase = try await alice.share()
            try await aliceBase.invite([bob.did, carol.did])
            let bobDoc = try await bob.join(aliceBase.convoId)
            let carolDoc = try await carol.join(aliceBase.convoId)
            let tapped = PreviewTapDeliveryService(real: alice.account.delivery)
            tapped.tap.forwardPreviews = false
            let aliceDoc = try await SharedDocument.open(bundleAt: alice.bundlePath, device: alice.device,
                                                         account: alice.account.with(delivery: tapped))
            try await aliceDoc.edit { try $0.insert("A", at: 3) }
            _ = try await aliceDoc.push()
            let preview = try await Self.waitForPreviews(tapped.tap, count: 1)[0]
            #expect(await bobDoc.applyPreview(EphemeralMessage(convoId: aliceBase.convoId, sender: alice.did, epoch: preview.epoch,
                                                              data: preview.data, kind: preview.kind)))
            try await bobDoc.edit { try $0.insert("B", at: 0) }
            let report = try await bobDoc.push()
            #expect(report.changes == 1, "only Bob's own change")
            _ = try await carolDoc.pull()
            #expect(try await carolDoc.text() == "BabcA")
        }
    }

    /// The author previews an edit and crashes before writing it (played by a copy of its
    /// disk that makes the edit and is then thrown away): the watching member holds the only
    /// copy, leaves it to its author for the grace period, then sends it, and the author,
    /// restarted from its disk, gets its own edit back and edits on without a collision.
    @Test(.timeLimit(.minutes(3))) func anEditPreviewedBeforeItsAuthorCrashedIsNotLost() async throws {
        try await SyncTestServer.with(.sqlite) { server in
            var quickGrace = SyncOptions()
            quickGrace.previewGrace = .milliseconds(500)
            let alice = try await server.person("alice"), bob = try await server.person("bob", options: quickGrace)
            try alice.createBundle(text: "abc")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)

            // Alice's process that crashes: it edits and previews, and its write is lost.
            let crashing = try await server.copy(of: alice, as: "alice-crashing")
            let tapped = PreviewTapDeliveryService(real: crashing.account.delivery)
            tapped.tap.forwardPreviews = false
            let doomed = try await SharedDocument.open(bundleAt: crashing.bundlePath, device: crashing.device,
                                                       account: crashing.account.with(delivery: tapped))
            try await doomed.edit { try $0.insert("A", at: 3) }
            let preview = try await Self.waitForPreviews(tapped.tap, count: 1)[0]
            try FileManager.default.removeItem(atPath: crashing.bundlePath)
            try FileManager.default.removeItem(atPath: crashing.account.home.path)
            #expect(try alice.text() == "abc", "Alice's disk does not have the edit")

            #expect(await bobDoc.applyPreview(EphemeralMessage(convoId: aliceDoc.convoId, sender: alice.did, epoch: preview.epoch,
                                                              data: preview.data, kind: preview.kind)))
            #expect(try await bobDoc.text() == "abcA")
            #expect(try await bobDoc.push().changes == 0, "within the grace its author is delivering it")
            try await Task.sleep(for: .milliseconds(600))
            #expect(try await bobDoc.push().changes == 1, "past the grace Bob sends it")

            // Alice restarts from her disk and gets her edit back; her next edit is a new
            // session's (a new actor), so nothing collides with the lost one.
            let restarted = try await alice.open()
            _ = try await restarted.pull()
            #expect(try await restarted.text() == "abcA")
            try await restarted.edit { try $0.insert("!", at: 4) }
            _ = try await restarted.push()
            _ = try await bobDoc.pull()
            #expect(try await bobDoc.text() == "abcA!")
            #expect(try alice.text() == "abcA!" && (try bob.text()) == "abcA!")
        }
    }
}
}
