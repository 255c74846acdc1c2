import Foundation
import ImprintServerTestSupport
import ImprintSync
import Testing

/// `live`: remote edits merged as the Delivery Service announces them, local edits pushed as
/// they land in the bundle (written by another process here), one event each.
extension SyncSuites {
@Suite struct LiveTests {
    @Test(arguments: StoreKind.available)
    func editsFlowBothWaysWhileLive(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "live: ")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            var bobEvents = bobDoc.live(pollInterval: .milliseconds(50)).makeAsyncIterator()

            // Alice's edits reach Bob's bundle, each as the Delivery Service announces it.
            for word in ["alice ", "again "] {
                try await aliceDoc.edit { try $0.insert(word, at: 6) }
                try await aliceDoc.push()
                while true {
                    let event = try #require(try await bobEvents.next())
                    if case .pulled = event, try bob.text().contains(word) { break }
                }
            }
            // An edit written into Bob's bundle by another process is pushed by Bob's live.
            try bob.edit { try $0.insert("bob ", at: 0) }
            while true {
                let event = try #require(try await bobEvents.next())
                if case let .pushed(report) = event, report.changes > 0 { break }
            }
            try await aliceDoc.pull()
            #expect(try alice.text() == "bob live: again alice ")

            // Alice's caret (before "live"), as Bob's live reports it on Bob's text.
            let presence = Task {
                while !Task.isCancelled {
                    try await aliceDoc.sendPresence(at: 4)
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            defer { presence.cancel() }
            while true {
                let event = try #require(try await bobEvents.next())
                if case let .presence(update, index) = event {
                    #expect(update.did == alice.did && update.isActive && index == 4)
                    break
                }
            }
        }
    }
}
}
