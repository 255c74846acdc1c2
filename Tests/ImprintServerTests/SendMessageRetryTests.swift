import Foundation
@testable import ImprintServer
import ImprintServerTestSupport
import ImprintDelivery
import Testing

/// v1.1 `sendMessage.clientMessageId`: a retry returns the first call's seq and epoch, takes no
/// new seq and emits no second event, on every backend.
@Suite struct SendMessageRetryTests {
    @Test(arguments: StoreKind.available)
    func sequentialRetryReturnsTheFirstSeqAndEmitsNoSecondEvent(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let input = SendMessageInput(
                convoId: fixture.convoId, epoch: fixture.epoch, messageType: .app, hash: fakeHash(7), size: 7,
                clientMessageId: "retry-1")
            let first = try await fixture.owner.sendMessage(input)
            let other = try await fixture.owner.sendMessage(SendMessageInput(
                convoId: fixture.convoId, epoch: fixture.epoch, messageType: .app, hash: fakeHash(8), size: 8,
                clientMessageId: "retry-2"))
            let again = try await fixture.owner.sendMessage(input)
            #expect(again.seq == first.seq)
            #expect(again.epoch == first.epoch)
            #expect(again.recipients == first.recipients)
            #expect(other.seq == first.seq + 1)
            let stored = try await fixture.owner.getMessages(convoId: fixture.convoId).messages
            #expect(stored.map(\.seq) == [1, first.seq, other.seq])
            let messageEvents = try await server.store.events(recipient: fixture.members[0].did, after: 0, limit: 100)
                .filter { if case .message = $0.payload { true } else { false } }
            #expect(messageEvents.count == 3)  // the add commit, and one per distinct message
        }
    }

    /// A commit retried after it advanced the epoch still gets its own answer (the epoch it
    /// moved the convo to), not an `EpochMismatch`.
    @Test(arguments: StoreKind.available)
    func retriedCommitReturnsTheEpochItMadeNotAMismatch(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server)
            let commit = Data("commit-bytes".utf8)
            let input = SendMessageInput(
                convoId: fixture.convoId, epoch: 0, messageType: .commit, hash: CommitDigest.hex(commit), size: commit.count,
                clientMessageId: "c-1", commit: commit)
            let first = try await fixture.owner.sendMessage(input)
            let again = try await fixture.owner.sendMessage(input)
            #expect(first.epoch == 1)
            #expect(again.seq == first.seq && again.epoch == 1)
        }
    }

    @Test(arguments: StoreKind.available)
    func concurrentIdenticalRetriesTakeExactlyOneSeq(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let input = SendMessageInput(
                convoId: fixture.convoId, epoch: fixture.epoch, messageType: .app, hash: fakeHash(1), size: 1,
                clientMessageId: "same")
            let seqs = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<12 {
                    group.addTask { try await fixture.owner.sendMessage(input).seq }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(Set(seqs) == [2])
            let stored = try await fixture.owner.getMessages(convoId: fixture.convoId).messages
            #expect(stored.map(\.seq) == [1, 2])
        }
    }

    @Test(arguments: StoreKind.available)
    func reusedIdWithOtherFieldsIsAConflict(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server)
            let input = SendMessageInput(
                convoId: fixture.convoId, epoch: 0, messageType: .app, hash: fakeHash(3), size: 3, clientMessageId: "x")
            _ = try await fixture.owner.sendMessage(input)
            var changedHash = input
            changedHash.hash = fakeHash(4)
            var changedSize = input
            changedSize.size = 4
            for changed in [changedHash, changedSize] {
                let error = await #expect(throws: DeliveryServiceError.self) { try await fixture.owner.sendMessage(changed) }
                #expect(error?.status == 409)
                #expect(error?.name == "ClientMessageIdReused")
            }
            // The id is per sender: another member may use it.
            let stored = try await fixture.owner.getMessages(convoId: fixture.convoId).messages
            #expect(stored.count == 1)
        }
    }

    @Test(arguments: StoreKind.available)
    func malformedClientMessageIdsAreInvalidRequests(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server)
            for id in ["", String(repeating: "a", count: 65), "tab\there", "é"] {
                let error = await #expect(throws: DeliveryServiceError.self) {
                    try await fixture.owner.sendMessage(SendMessageInput(
                        convoId: fixture.convoId, epoch: 0, messageType: .app, hash: fakeHash(1), size: 1, clientMessageId: id))
                }
                #expect(error?.status == 400)
                #expect(error?.name == "InvalidRequest")
            }
            _ = try await fixture.owner.sendMessage(SendMessageInput(
                convoId: fixture.convoId, epoch: 0, messageType: .app, hash: fakeHash(1), size: 1,
                clientMessageId: String(repeating: "~", count: 64)))
        }
    }
}
