import Crypto
import Foundation
import ImprintCRDT
import ImprintDelivery
import ImprintMLS
import ImprintServerTestSupport
@testable import ImprintSync
import Testing

/// Presence: where a member's caret is reaches the others at once, as a cursor that stays on
/// its text while they edit; encrypted in the epoch, signed, stored by no server; forged,
/// replayed or other-epoch updates are dropped.
extension SyncSuites {
@Suite struct PresenceTests {
    struct TimeoutError: Error {}

    /// Sends `doc`'s presence at `position` every 100 ms until `watcher`'s stream yields an
    /// update (the relay keeps nothing for a stream that is not open yet).
    static func firstUpdate(from doc: SharedDocument, at position: Int, to watcher: SharedDocument) async throws -> PresenceUpdate {
        try await withThrowingTaskGroup(of: PresenceUpdate?.self) { group in
            group.addTask {
                for try await update in watcher.presenceUpdates() { return update }
                return nil
            }
            group.addTask {
                for _ in 0..<200 {
                    try await doc.sendPresence(at: position)
                    try await Task.sleep(for: .milliseconds(100))
                }
                throw TimeoutError()
            }
            let first = try await group.next()!
            group.cancelAll()
            return try #require(first)
        }
    }

    @Test(arguments: StoreKind.available)
    func aCaretReachesTheOthersAndStaysOnItsText(kind: StoreKind) async throws {
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "Hello world")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            let messagesBefore = try await bob.account.delivery.getMessages(convoId: aliceDoc.convoId, sinceSeq: nil, limit: nil).messages.count

            let update = try await Self.firstUpdate(from: aliceDoc, at: 6, to: bobDoc)
            #expect(update.did == alice.did && update.isActive)
            let cursor = try #require(update.cursor)
            #expect(try await bobDoc.index(of: cursor) == 6, "before \"world\"")

            // Bob types at the start; Alice's caret stays before "world".
            try await bobDoc.edit { try $0.insert(">> ", at: 0) }
            #expect(try await bobDoc.index(of: cursor) == 9)
            // Nothing of it was sequenced or stored.
            #expect(try await bob.account.delivery.getMessages(convoId: aliceDoc.convoId, sinceSeq: nil, limit: nil).messages.count == messagesBefore)
            let feed = try await bob.account.zones.fetchChanges(zoneId: "doc_\(aliceDoc.convoId)", since: nil, limit: 1000)
            #expect(feed.records.allSatisfy { $0.recordType == "change" || $0.recordType == "commit" })
        }
    }

    /// Updates that do not come from who they say, do not verify, repeat an older one, or were
    /// sealed in an epoch the watcher is not in are dropped, each counted.
    @Test func forgedStaleAndOtherEpochUpdatesAreDropped() async throws {
        try await SyncTestServer.with(.sqlite) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob"), carol = try await server.person("carol")
            try alice.createBundle(text: "Hello")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did, carol.did])
            let bobDoc = try await bob.join(aliceDoc.convoId)
            _ = try await carol.join(aliceDoc.convoId)
            let convo = aliceDoc.convoId
            let group = await aliceDoc.group
            let now = Date()
            func sealed(_ did: String, by key: Curve25519.Signing.PrivateKey, at date: Date = now, in group: MLSGroup = group) throws -> Data {
                Data(try PresenceMessage.seal(PresenceUpdate(did: did, isActive: true, cursor: .start, selectionEnd: nil, sentAt: date),
                                              signingKey: key, group: group, convoId: convo))
            }
            func message(_ data: Data, from sender: String, epoch: Int = Int(group.epoch)) -> EphemeralMessage {
                EphemeralMessage(convoId: convo, sender: sender, epoch: epoch, data: data)
            }

            let genuine = try sealed(alice.did, by: alice.account.identity.signingKey)
            #expect(await bobDoc.openPresence(message(genuine, from: alice.did)) != nil)
            #expect(await bobDoc.openPresence(message(genuine, from: alice.did)) == nil, "a replay is older than what was seen")
            // Carol relays an update naming Alice, signed with her own key; then one naming
            // herself, signed with a key that is not her DID's.
            #expect(await bobDoc.openPresence(message(try sealed(alice.did, by: carol.account.identity.signingKey, at: now + 1), from: carol.did)) == nil)
            #expect(await bobDoc.openPresence(message(try sealed(carol.did, by: .init(), at: now + 2), from: carol.did)) == nil)
            #expect(await bobDoc.openPresence(message(try sealed(carol.did, by: carol.account.identity.signingKey, at: now + 3), from: carol.did)) != nil)
            // A flipped byte, and a message claiming another epoch.
            var flipped = try sealed(alice.did, by: alice.account.identity.signingKey, at: now + 4)
            flipped[40] ^= 1
            #expect(await bobDoc.openPresence(message(flipped, from: alice.did)) == nil)
            #expect(await bobDoc.openPresence(message(try sealed(alice.did, by: alice.account.identity.signingKey, at: now + 5), from: alice.did,
                                                      epoch: Int(group.epoch) + 1)) == nil)
            #expect(await bobDoc.droppedPresenceMessages == 5)

            // After a commit Bob has not pulled yet, Alice's updates are of an epoch he is not in.
            try await aliceDoc.remove(carol.did)
            let next = await aliceDoc.group
            let newer = try sealed(alice.did, by: alice.account.identity.signingKey, at: now + 6, in: next)
            #expect(await bobDoc.openPresence(message(newer, from: alice.did, epoch: Int(next.epoch))) == nil)
            _ = try await bobDoc.pull()
            #expect(await bobDoc.openPresence(message(newer, from: alice.did, epoch: Int(next.epoch))) != nil)
        }
    }
}
}
