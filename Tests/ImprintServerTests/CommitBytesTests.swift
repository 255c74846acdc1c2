import Foundation
@testable import ImprintServer
import ImprintServerTestSupport
import ImprintDelivery
import Testing

/// v1.1: commit bytes travel with every call that advances the epoch and come back from
/// `getMessages`, never in events.
@Suite struct CommitBytesTests {
    @Test(arguments: StoreKind.available)
    func commitBytesRoundTripThroughGetMessages(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let owner = server.client()
            let bob = server.client()
            let convoId = try await owner.createConvo(CreateConvoInput(cipherSuite: 1)).convo.id
            let addCommit = Data("add-commit".utf8)
            let added = try await owner.addMembers(AddMembersInput(
                convoId: convoId, epoch: 0, dids: [bob.did], commit: addCommit, welcome: Data("welcome".utf8)))
            let sentCommit = Data((0..<300).map { UInt8($0 % 251) })
            let sent = try await owner.sendMessage(SendMessageInput(
                convoId: convoId, epoch: added.epoch, messageType: .commit, hash: CommitDigest.hex(sentCommit),
                size: sentCommit.count, commit: sentCommit))
            // A v1 client's commit without bytes is still accepted.
            let bare = try await owner.sendMessage(SendMessageInput(
                convoId: convoId, epoch: sent.epoch, messageType: .commit, hash: fakeHash(9), size: 9))
            _ = try await owner.sendMessage(SendMessageInput(
                convoId: convoId, epoch: bare.epoch, messageType: .app, hash: fakeHash(10), size: 10))
            let removeCommit = Data("remove-commit".utf8)
            _ = try await owner.removeMember(RemoveMemberInput(
                convoId: convoId, epoch: bare.epoch, did: bob.did, commit: removeCommit))
            let messages = try await owner.getMessages(convoId: convoId).messages
            #expect(messages.map(\.commit) == [addCommit, sentCommit, nil, nil, removeCommit])
            #expect(messages[0].hash == CommitDigest.hex(addCommit))
            // Events stay small: no commit bytes.
            let events = try await server.store.events(recipient: owner.did, after: 0, limit: 100)
            for event in events {
                if case .message(let message) = event.payload { #expect(message.message.commit == nil) }
            }
            #expect(events.contains { if case .message = $0.payload { true } else { false } })
        }
    }

    @Test(arguments: StoreKind.available)
    func commitBytesWhoseHashDiffersAreRefused(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server)
            let commit = Data("commit".utf8)
            for input in [
                SendMessageInput(convoId: fixture.convoId, epoch: 0, messageType: .commit, hash: fakeHash(1), size: commit.count, commit: commit),
                SendMessageInput(convoId: fixture.convoId, epoch: 0, messageType: .app, hash: CommitDigest.hex(commit), size: commit.count, commit: commit),
            ] {
                let error = await #expect(throws: DeliveryServiceError.self) { try await fixture.owner.sendMessage(input) }
                #expect(error?.status == 400)
                #expect(error?.name == "InvalidRequest")
            }
            #expect(try await fixture.owner.getMessages(convoId: fixture.convoId).messages.isEmpty)
        }
    }

    /// A commit (up to the large body limit) fits a sendMessage body.
    @Test(arguments: StoreKind.available)
    func sendMessageTakesACommitAboveTheSmallBodyLimit(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server)
            let commit = Data(repeating: 0x5a, count: 200 << 10)
            let sent = try await fixture.owner.sendMessage(SendMessageInput(
                convoId: fixture.convoId, epoch: 0, messageType: .commit, hash: CommitDigest.hex(commit), size: commit.count,
                commit: commit))
            let stored = try await fixture.owner.getMessages(convoId: fixture.convoId).messages
            #expect(stored.map(\.seq) == [sent.seq])
            #expect(stored.first?.commit == commit)
        }
    }
}
