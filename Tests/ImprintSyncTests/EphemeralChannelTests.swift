import Foundation
import ImprintDelivery
import ImprintServerTestSupport
@testable import ImprintSync
import Testing

/// The ephemeral socket (Delivery Service v1.5) under `live`: previews and presence leave
/// through it, not by `sendEphemeral`, and arrive through the receiver's; without it they go
/// by `sendEphemeral` as before.
extension SyncSuites {
@Suite struct EphemeralChannelTests {
    /// Waits up to 30 s until `document`'s `live` holds its ephemeral socket.
    static func waitForChannel(_ document: SharedDocument) async throws {
        for _ in 0..<3000 where await document.ephemeralChannel == nil { try await Task.sleep(for: .milliseconds(10)) }
        try #require(await document.ephemeralChannel != nil, "live opened no ephemeral socket")
    }

    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.available)
    func previewsTravelOverTheChannelWhileLive(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let (aliceDoc, bobDoc, tapped, _, _) = try await PreviewTests.tappedPair(server)
            let aliceLive = Task { for try await _ in aliceDoc.live(pollInterval: .milliseconds(50)) {} }
            defer { aliceLive.cancel() }
            var bobEvents = bobDoc.live(pollInterval: .milliseconds(50)).makeAsyncIterator()
            try await Self.waitForChannel(aliceDoc)
            try await Self.waitForChannel(bobDoc)
            // Bob's socket is relaying (Alice's presence, sent on her socket, reached him).
            try await PreviewTests.waitForEphemeralStream(from: aliceDoc, events: &bobEvents)
            let view = await bobDoc.patches()

            // Alice's durable send is held; her edit's preview goes on her socket.
            tapped.tap.hold()
            try await aliceDoc.edit { try $0.insert(" world", at: 5) }
            try await PreviewTests.waitForGrowth(view, by: 6)
            #expect(try await bobDoc.text() == "Hello world")
            #expect(await bobDoc.appliedPreviews == 1)
            #expect(tapped.tap.previews.isEmpty, "no preview went by sendEphemeral: \(tapped.tap.previews.count)")
            tapped.tap.release()
        }
    }

    /// Not live: no socket, and a preview goes by `sendEphemeral`.
    @Test(.timeLimit(.minutes(3))) func withoutLiveAPreviewIsPosted() async throws {
        try await SyncTestServer.with(.sqlite) { server in
            let (aliceDoc, _, tapped, _, _) = try await PreviewTests.tappedPair(server)
            try await aliceDoc.edit { try $0.insert("!", at: 5) }
            _ = try await aliceDoc.push()
            #expect(await aliceDoc.ephemeralChannel == nil)
            _ = try await PreviewTests.waitForPreviews(tapped.tap, count: 1)
        }
    }
}
}
