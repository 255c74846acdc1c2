import Foundation
import ImprintServerTestSupport
import ImprintSync
import Testing

/// Application keys reserved ahead of use (`SyncOptions.sendingKeysAhead`): a member's
/// messages encrypted with them all open at the others, also after the member's process ends
/// with keys left (their generations are skipped, never reused).
extension SyncSuites {
@Suite struct SendingKeysTests {
    @Test(arguments: StoreKind.available)
    func messagesFromReservedKeysOpenAcrossRestarts(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "")
            let first = try await alice.share()
            try await first.invite([bob.did])
            let bobDoc = try await bob.join(first.convoId)
            // Reservations of 1, 2, 4 and 8 keys: ten pushes use 1 + 2 + 4 and three of the 8,
            // leaving five unused when this object is dropped ("the process ends").
            var expected = ""
            for index in 0..<10 {
                let word = "a\(index) "
                try alice.edit { try $0.insert(word, at: 0) }
                expected = word + expected
                #expect(try await first.push().changes == 1)
                if index % 3 == 0 { try await bobDoc.pull() }
            }
            // A new object on the same home starts from the stored ratchet, past the five
            // unused keys: its messages open at Bob after the skipped generations.
            let second = try await alice.open()
            for index in 10..<13 {
                let word = "a\(index) "
                try alice.edit { try $0.insert(word, at: 0) }
                expected = word + expected
                #expect(try await second.push().changes == 1)
            }
            let pulled = try await bobDoc.pull()
            #expect(pulled.gaps.isEmpty)
            #expect(try bob.text() == expected)
            #expect(try alice.text() == expected)
            let status = await bobDoc.status()
            #expect(status.alerts.isEmpty && status.gaps.isEmpty && status.processedSeq == status.latestSeq)
        }
    }
}
}
