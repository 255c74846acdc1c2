import Foundation
import ImprintCRDT
import ImprintServerTestSupport
import ImprintStore
@testable import ImprintSync
import Testing

/// A document shared with `history: .redacted` gives joiners its current state only: no byte
/// of text deleted before they joined reaches them, their copy reopens from disk and keeps
/// merging both ways. Shared with the whole history (the default), the same deleted text is
/// readable at the old version, which shows the test can tell the two apart.
extension SyncSuites {
@Suite struct CurrentStateSnapshotTests {
    static let marker = "qz-deleted-before-bob-joined-xv"

    @Test(.timeLimit(.minutes(3)), arguments: [HistoryRetention.full, .redacted])
    func aJoinerGetsDeletedTextOnlyWithTheWholeHistory(history: HistoryRetention) async throws {
        try await SyncTestServer.with(.sqlite) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "Dear Bob, ")
            let draft = try DocumentBundle.open(at: alice.bundlePath, device: alice.device)
            try draft.insert(Self.marker, at: 10)
            let withMarker = draft.document.currentHeads
            try draft.delete(at: 10, count: Self.marker.count)
            try draft.insert("hello.", at: 10)

            let aliceDoc = try await SharedDocument.share(bundleAt: alice.bundlePath, device: alice.device,
                                                          account: alice.account, history: history)
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            #expect(try await bobDoc.text() == "Dear Bob, hello.")
            #expect(await bobDoc.state.currentStateOnly == (history == .redacted), "the setting travels in the snapshot")

            // What Bob's bundle holds, read again from disk.
            let onDisk = try DocumentBundle.open(at: bob.bundlePath, device: bob.device)
            #expect(try onDisk.text() == "Dear Bob, hello.")
            let old = try onDisk.document.text(onDisk.body, at: withMarker)
            if history == .redacted {
                #expect(!old.contains(Self.marker))
                #expect(old == "Dear Bob, " + String(repeating: Document.redactedCharacter, count: Self.marker.count))
                #expect(try Self.filesContain(Self.marker, under: bob.bundlePath) == false, "no byte of the deleted text on Bob's disk")
            } else {
                #expect(old == "Dear Bob, " + Self.marker, "the whole history: the old version reads as it was")
            }

            // Bob's copy, reopened, merges both ways.
            let reopened = try await bob.open()
            try await reopened.edit { try $0.insert(" Yours, Bob.", at: 16) }
            _ = try await reopened.push()
            _ = try await aliceDoc.pull()
            try await aliceDoc.edit { try $0.insert("Hi! ", at: 0) }
            _ = try await aliceDoc.push()
            _ = try await reopened.pull()
            #expect(try await aliceDoc.text() == "Hi! Dear Bob, hello. Yours, Bob.")
            #expect(try await reopened.text() == "Hi! Dear Bob, hello. Yours, Bob.")
            #expect(try bob.text() == "Hi! Dear Bob, hello. Yours, Bob.")
        }
    }

    /// The snapshot's optional fields: absent ones read as before (a snapshot without either
    /// ends at the document), each combination round-trips, a bad flag is refused.
    @Test func snapshotFieldsRoundTrip() throws {
        let head = try #require(ChangeHash(bytes: [UInt8](repeating: 7, count: 32)))
        for (threshold, current) in [(nil, false), (5, false), (nil, true), (100, true)] as [(Int?, Bool)] {
            let content = SnapshotContent(documentID: "d", admins: ["did:key:a"], heads: [head], document: [1, 2, 3],
                                          mailboxThreshold: threshold, currentStateOnly: current)
            let decoded = try SnapshotContent(decoding: content.encoded)
            #expect(decoded == content)
        }
        let plain = SnapshotContent(documentID: "d", admins: [], heads: [], document: [9]).encoded
        #expect(plain.last == 9, "nothing after the document")
        var badFlag = SnapshotContent(documentID: "d", admins: [], heads: [], document: [9], currentStateOnly: true).encoded
        badFlag[badFlag.count - 1] = 2
        #expect(throws: SyncError.self) { try SnapshotContent(decoding: badFlag) }
    }

    /// Whether any file under `path` holds `text`'s UTF-8 bytes.
    static func filesContain(_ text: String, under path: String) throws -> Bool {
        let needle = Data(text.utf8)
        guard let walker = FileManager.default.enumerator(atPath: path) else { return false }
        for case let relative as String in walker {
            let file = path + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            if try Data(contentsOf: URL(fileURLWithPath: file)).range(of: needle) != nil { return true }
        }
        return false
    }
}
}
