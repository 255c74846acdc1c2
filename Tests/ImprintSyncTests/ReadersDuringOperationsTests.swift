import Foundation
import ImprintServerTestSupport
import ImprintSync
import Testing

/// `status()` and `members()` called while a pull of the same object is under way (actor
/// methods interleave at the pull's suspension points) read what they can without reloading
/// the persisted state over the pull's: the pull's consumed keys, applied commit and cursor
/// all reach the disk, and a second pull has nothing left to process.
extension SyncSuites {
@Suite struct ReadersDuringOperationsTests {
    @Test(arguments: StoreKind.available)
    func statusAndMembersDuringAPullUndoNothing(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob"), carol = try await server.person("carol")
            try alice.createBundle(text: "")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            // Messages, a commit (Carol's invitation) in the middle, more messages.
            for index in 0..<40 {
                if index == 20 { try await aliceDoc.invite([carol.did]) }
                try alice.edit { try $0.insert("w\(index) ", at: 0) }
                try await aliceDoc.push()
            }
            let reading = Task {
                var reads = 0
                while !Task.isCancelled {
                    _ = await bobDoc.status()
                    _ = try? await bobDoc.members()
                    reads += 1
                    await Task.yield()
                }
                return reads
            }
            let pulled = try await bobDoc.pull()
            reading.cancel()
            let reads = await reading.value
            #expect(reads > 0)
            #expect(pulled.commits == 1 && pulled.messages >= 40, "\(pulled)")
            let again = try await bobDoc.pull()
            #expect(again.messages == 0 && again.commits == 0, "a second pull processed \(again)")
            #expect(try bob.text() == alice.text())
            let status = await bobDoc.status()
            #expect(status.processedSeq == status.latestSeq && status.alerts.isEmpty && status.bufferedSeqs.isEmpty, "\(status)")
            #expect(Set(try await bobDoc.members().members.map(\.did)) == [alice.did, bob.did, carol.did])
        }
    }
}
}
