import Foundation
@testable import ImprintServer
import ImprintServerTestSupport
import ImprintDelivery
import Testing

/// v1.3 processed cursors and checkpoints (`CompactionPoint`), on every backend.
@Suite struct ProcessedCursorTests {
    /// Sends `count` application messages as `client` and returns their seqs.
    private func send(_ count: Int, as client: DeliveryClient, _ fixture: ConvoFixture, from salt: Int = 0) async throws -> [Int] {
        var seqs: [Int] = []
        for index in 0..<count {
            let output = try await client.sendMessage(SendMessageInput(
                convoId: fixture.convoId, epoch: fixture.epoch, messageType: .app, hash: fakeHash(salt + index), size: 16))
            seqs.append(output.seq)
        }
        return seqs
    }

    @Test(arguments: StoreKind.available)
    func cursorsOnlyMoveForwardAndStayWithinTheConvo(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let bob = fixture.members[0]
            let seqs = try await send(4, as: fixture.owner, fixture)
            #expect(try await bob.updateCursor(convoId: fixture.convoId, processedSeq: seqs[2]) == seqs[2])
            // A late retry of an older acknowledgement leaves the cursor where it is.
            #expect(try await bob.updateCursor(convoId: fixture.convoId, processedSeq: seqs[0]) == seqs[2])
            await expectServiceError(400, "InvalidRequest") {
                try await bob.updateCursor(convoId: fixture.convoId, processedSeq: seqs[3] + 1)
            }
            await expectServiceError(400, "InvalidRequest") {
                try await bob.updateCursor(convoId: fixture.convoId, processedSeq: -1)
            }
            let stranger = server.client()
            await expectServiceError(403, "NotMember") {
                try await stranger.updateCursor(convoId: fixture.convoId, processedSeq: 1)
            }
            await expectServiceError(403, "NotMember") {
                try await stranger.getCursors(convoId: fixture.convoId)
            }
            let cursors = try await fixture.owner.getCursors(convoId: fixture.convoId)
            let bobs = try #require(cursors.cursors.first { $0.did == bob.did })
            #expect(bobs.processedSeq == seqs[2])
            #expect(bobs.updatedAt != nil)
            #expect(cursors.firstKeptSeq == 1)
        }
    }

    /// A member added by a commit starts at that commit: it cannot read anything older, so it
    /// holds nothing older in place.
    @Test(arguments: StoreKind.available)
    func anAddedMemberStartsAtItsAddCommit(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            var fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            _ = try await send(3, as: fixture.owner, fixture)
            let carol = server.client()
            let added = try await fixture.owner.addMembers(AddMembersInput(
                convoId: fixture.convoId, epoch: fixture.epoch, dids: [carol.did], commit: Data("commit-1".utf8),
                welcome: Data("welcome-1".utf8)))
            fixture.epoch = added.epoch
            let cursors = try await fixture.owner.getCursors(convoId: fixture.convoId).cursors
            let carols = try #require(cursors.first { $0.did == carol.did })
            #expect(carols.processedSeq == added.seq)
            #expect(carols.updatedAt == nil)
        }
    }

    @Test(arguments: StoreKind.available)
    func onlyTheSenderOfAnApplicationMessageMarksACheckpoint(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let bob = fixture.members[0]
            let mine = try await send(1, as: fixture.owner, fixture)[0]
            await expectServiceError(403, "Forbidden") {
                try await bob.markCheckpoint(convoId: fixture.convoId, seq: mine)
            }
            // Seq 1 is the commit that added bob: commits are never checkpoints.
            await expectServiceError(403, "Forbidden") {
                try await fixture.owner.markCheckpoint(convoId: fixture.convoId, seq: 1)
            }
            await expectServiceError(404, "NotFound") {
                try await fixture.owner.markCheckpoint(convoId: fixture.convoId, seq: mine + 50)
            }
            try await fixture.owner.markCheckpoint(convoId: fixture.convoId, seq: mine)
            try await fixture.owner.markCheckpoint(convoId: fixture.convoId, seq: mine)  // idempotent
        }
    }

    /// The compaction point is the newest checkpoint every active member has passed: the
    /// slowest member holds it, and removing that member releases it.
    @Test(arguments: StoreKind.available)
    func theSlowestActiveMemberHoldsTheCompactionPoint(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            var fixture = try await ConvoFixture.make(on: server, extraMembers: 2)
            let (bob, carol) = (fixture.members[0], fixture.members[1])
            let seqs = try await send(6, as: fixture.owner, fixture)
            try await fixture.owner.markCheckpoint(convoId: fixture.convoId, seq: seqs[1])
            try await fixture.owner.markCheckpoint(convoId: fixture.convoId, seq: seqs[4])
            #expect(try await fixture.owner.getCursors(convoId: fixture.convoId).compactableBefore == nil)
            for member in [fixture.owner, bob] {
                _ = try await member.updateCursor(convoId: fixture.convoId, processedSeq: seqs[5])
            }
            _ = try await carol.updateCursor(convoId: fixture.convoId, processedSeq: seqs[2])
            #expect(try await fixture.owner.getCursors(convoId: fixture.convoId).compactableBefore == seqs[1])
            let removed = try await fixture.owner.removeMember(RemoveMemberInput(
                convoId: fixture.convoId, epoch: fixture.epoch, did: carol.did, commit: Data("remove-carol".utf8)))
            fixture.epoch = removed.epoch
            #expect(try await fixture.owner.getCursors(convoId: fixture.convoId).compactableBefore == seqs[4])
        }
    }
}
