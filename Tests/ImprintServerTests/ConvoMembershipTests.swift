import Foundation
import ImprintServerTestSupport
import ImprintDelivery
import Testing

@Suite struct ConvoMembershipTests {
    @Test(arguments: StoreKind.available)
    func createListAndDuplicate(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let alice = server.client()
            let made = try await alice.createConvo(CreateConvoInput(convoId: "abc123", title: "Notes", cipherSuite: 1))
            #expect(made.convo.id == "abc123")
            #expect(made.convo.epoch == 0)
            #expect(made.convo.creator == alice.did)
            #expect(made.convo.title == "Notes")
            #expect(made.convo.members.map(\.did) == [alice.did])
            let generated = try await alice.createConvo(CreateConvoInput(cipherSuite: 1))
            #expect(generated.convo.id.count == 32)
            #expect(try await alice.getConvos().convos.map(\.id).sorted() == ["abc123", generated.convo.id].sorted())
            #expect(try await server.client().getConvos().convos.isEmpty)
            await expectServiceError(409, "ConvoExists") {
                try await server.client().createConvo(CreateConvoInput(convoId: "abc123", cipherSuite: 1))
            }
        }
    }

    @Test(arguments: StoreKind.available)
    func addMembersWelcomeConfirmRemoveLeave(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let alice = server.client()
            let bob = server.client()
            let carol = server.client()
            let convoId = try await alice.createConvo(CreateConvoInput(cipherSuite: 1)).convo.id
            await expectServiceError(404, "NoWelcome") { try await bob.getWelcome(convoId: convoId) }

            let added = try await alice.addMembers(AddMembersInput(
                convoId: convoId, epoch: 0, dids: [bob.did, carol.did], commit: Data("c1".utf8), welcome: Data("w1".utf8)))
            #expect(added == EpochAdvanceOutput(epoch: 1, seq: 1))
            let welcome = try await bob.getWelcome(convoId: convoId)
            #expect(welcome.welcome == Data("w1".utf8))
            #expect(welcome.epoch == 1)
            try await bob.confirmWelcome(convoId: convoId)
            await expectServiceError(404, "NoWelcome") { try await bob.getWelcome(convoId: convoId) }
            await expectServiceError(404, "NoWelcome") { try await bob.confirmWelcome(convoId: convoId) }
            await expectServiceError(404, "NoWelcome") { try await alice.getWelcome(convoId: convoId) }

            let convo = try #require(try await bob.getConvos().convos.first)
            #expect(Set(convo.members.map(\.did)) == [alice.did, bob.did, carol.did])
            #expect(convo.epoch == 1)

            let commits = try await bob.getMessages(convoId: convoId)
            #expect(commits.messages.map(\.seq) == [1])
            #expect(commits.messages.first?.messageType == .commit)
            #expect(commits.messages.first?.sender == alice.did)
            #expect(commits.messages.first?.epoch == 0)
            #expect(commits.messages.first?.size == 2)

            // Removal (v1.1: by the creator or an admin): epoch + 1, and carol loses access at once.
            let removed = try await alice.removeMember(RemoveMemberInput(convoId: convoId, epoch: 1, did: carol.did, commit: Data("c2".utf8)))
            #expect(removed == EpochAdvanceOutput(epoch: 2, seq: 2))
            await expectServiceError(403, "NotMember") { try await carol.getMessages(convoId: convoId) }
            await expectServiceError(403, "NotMember") {
                try await carol.sendMessage(SendMessageInput(convoId: convoId, epoch: 2, messageType: .app, hash: fakeHash(1), size: 1))
            }
            await expectServiceError(404, "NoWelcome") { try await carol.getWelcome(convoId: convoId) }
            #expect(try await carol.getConvos().convos.isEmpty)

            // Leave: bob inactive, epoch unchanged.
            try await bob.leaveConvo(convoId: convoId)
            await expectServiceError(403, "NotMember") { try await bob.getMessages(convoId: convoId) }
            let remaining = try #require(try await alice.getConvos().convos.first)
            #expect(remaining.members.map(\.did) == [alice.did])
            #expect(remaining.epoch == 2)
        }
    }

    @Test(arguments: StoreKind.available)
    func nonMembersAndUnknownConvos(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server)
            let stranger = server.client()
            await expectServiceError(403, "NotMember") { try await stranger.getMessages(convoId: fixture.convoId) }
            await expectServiceError(403, "NotMember") {
                try await stranger.sendMessage(SendMessageInput(convoId: fixture.convoId, epoch: 0, messageType: .app, hash: fakeHash(1), size: 3))
            }
            await expectServiceError(403, "NotMember") {
                try await stranger.addMembers(AddMembersInput(convoId: fixture.convoId, epoch: 0, dids: [stranger.did], commit: Data([1]), welcome: Data([2])))
            }
            await expectServiceError(403, "NotMember") {
                try await stranger.removeMember(RemoveMemberInput(convoId: fixture.convoId, epoch: 0, did: fixture.owner.did, commit: Data([1])))
            }
            await expectServiceError(403, "NotMember") { try await stranger.leaveConvo(convoId: fixture.convoId) }
            await expectServiceError(404, "NotFound") { try await stranger.getMessages(convoId: "no-such-convo") }
            await expectServiceError(404, "NotFound") {
                try await fixture.owner.sendMessage(SendMessageInput(convoId: "no-such-convo", epoch: 0, messageType: .app, hash: fakeHash(1), size: 3))
            }
            await expectServiceError(400, "InvalidRequest") {
                try await fixture.owner.addMembers(AddMembersInput(convoId: fixture.convoId, epoch: 0, dids: [fixture.owner.did], commit: Data([1]), welcome: Data([2])))
            }
            await expectServiceError(404, "NotFound") {
                try await fixture.owner.removeMember(RemoveMemberInput(convoId: fixture.convoId, epoch: 0, did: stranger.did, commit: Data([1])))
            }
        }
    }

    @Test(arguments: StoreKind.available)
    func staleEpochGets409WithCurrentEpoch(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            #expect(fixture.epoch == 1)
            let stale = await expectServiceError(409, "EpochMismatch") {
                try await fixture.owner.sendMessage(SendMessageInput(convoId: fixture.convoId, epoch: 0, messageType: .app, hash: fakeHash(1), size: 3))
            }
            #expect(stale?.body.currentEpoch == 1)
            let staleAdd = await expectServiceError(409, "EpochMismatch") {
                try await fixture.owner.addMembers(AddMembersInput(convoId: fixture.convoId, epoch: 0, dids: [server.client().did], commit: Data([1]), welcome: Data([2])))
            }
            #expect(staleAdd?.body.currentEpoch == 1)
            let future = await expectServiceError(409, "EpochMismatch") {
                try await fixture.owner.removeMember(RemoveMemberInput(convoId: fixture.convoId, epoch: 7, did: fixture.members[0].did, commit: Data([1])))
            }
            #expect(future?.body.currentEpoch == 1)
        }
    }

    @Test(arguments: StoreKind.available)
    func recipientsCarryRegisteredStorage(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 2)
            let folder = StorageProvider(type: "folder", endpoint: "file:///shared/imprint", config: ["depth": .number(2)])
            try await fixture.members[0].registerStorage(folder)
            let sent = try await fixture.owner.sendMessage(SendMessageInput(
                convoId: fixture.convoId, epoch: fixture.epoch, messageType: .app, hash: fakeHash(7), size: 42, recordName: "rec-1"))
            #expect(sent.seq == 2)
            #expect(sent.epoch == fixture.epoch)
            let byDID = Dictionary(uniqueKeysWithValues: sent.recipients.map { ($0.did, $0.storage) })
            #expect(Set(byDID.keys) == Set(fixture.members.map(\.did)))
            #expect(byDID[fixture.members[0].did] == folder)
            #expect(byDID[fixture.members[1].did] == .defaultProvider)
            #expect(abs(sent.serverTime.timeIntervalSinceNow) < 60)
            let page = try await fixture.members[1].getMessages(convoId: fixture.convoId, sinceSeq: 1)
            #expect(page.messages.map(\.recordName) == ["rec-1"])
            #expect(page.messages.first?.hash == fakeHash(7))
            #expect(page.cursor == nil)
        }
    }

    @Test(arguments: StoreKind.available)
    func getMessagesPagesWithCursor(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server)
            for n in 1...5 {
                _ = try await fixture.owner.sendMessage(SendMessageInput(convoId: fixture.convoId, epoch: 0, messageType: .app, hash: fakeHash(n), size: n))
            }
            let first = try await fixture.owner.getMessages(convoId: fixture.convoId, limit: 2)
            #expect(first.messages.map(\.seq) == [1, 2])
            #expect(first.cursor == 2)
            let second = try await fixture.owner.getMessages(convoId: fixture.convoId, sinceSeq: first.cursor, limit: 2)
            #expect(second.messages.map(\.seq) == [3, 4])
            let last = try await fixture.owner.getMessages(convoId: fixture.convoId, sinceSeq: second.cursor, limit: 2)
            #expect(last.messages.map(\.seq) == [5])
            #expect(last.cursor == nil)
        }
    }
}
