import Foundation
import ImprintServerTestSupport
import ImprintDelivery
import Testing

/// v1.1 roles: only the creator and the admins it names add and remove members; anyone may
/// commit the removal of a member who left; `setAdmins` is the creator's.
@Suite struct ConvoRolesTests {
    static func expectError(_ status: Int, _ name: String, _ body: () async throws -> Void) async {
        let error = await #expect(throws: DeliveryServiceError.self) { try await body() }
        #expect(error?.status == status)
        #expect(error?.name == name)
    }

    @Test(arguments: StoreKind.available)
    func onlyCreatorAndAdminsChangeMembersAndAnyoneRemovesTheDeparted(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let owner = server.client()
            let admin = server.client()
            let plain = server.client()
            let leaver = server.client()
            let late = server.client()
            let made = try await owner.createConvo(CreateConvoInput(cipherSuite: 1, admins: [admin.did, owner.did, admin.did]))
            let convoId = made.convo.id
            #expect(made.convo.admins == [owner.did, admin.did])
            var epoch = try await owner.addMembers(AddMembersInput(
                convoId: convoId, epoch: 0, dids: [admin.did, plain.did], commit: Data("c0".utf8), welcome: Data("w".utf8))).epoch
            // The admin named at creation may add once it is a member.
            epoch = try await admin.addMembers(AddMembersInput(
                convoId: convoId, epoch: epoch, dids: [leaver.did], commit: Data("c1".utf8), welcome: Data("w".utf8))).epoch
            await Self.expectError(403, "Forbidden") {
                _ = try await plain.addMembers(AddMembersInput(
                    convoId: convoId, epoch: epoch, dids: [late.did], commit: Data("c2".utf8), welcome: Data("w".utf8)))
            }
            await Self.expectError(403, "Forbidden") {
                _ = try await plain.removeMember(RemoveMemberInput(convoId: convoId, epoch: epoch, did: leaver.did, commit: Data("c2".utf8)))
            }
            // Once it left, any member commits its removal.
            try await leaver.leaveConvo(convoId: convoId)
            epoch = try await plain.removeMember(RemoveMemberInput(convoId: convoId, epoch: epoch, did: leaver.did, commit: Data("c3".utf8))).epoch
            // Removed once: a second removal finds no member.
            await Self.expectError(404, "NotFound") {
                _ = try await owner.removeMember(RemoveMemberInput(convoId: convoId, epoch: epoch, did: leaver.did, commit: Data("c4".utf8)))
            }
            let messages = try await owner.getMessages(convoId: convoId).messages
            #expect(messages.map(\.commit) == ["c0", "c1", "c3"].map { Data($0.utf8) })
            #expect(try await owner.getConvos().convos.first?.admins == [owner.did, admin.did])
        }
    }

    @Test(arguments: StoreKind.available)
    func setAdminsIsTheCreatorsAndNamesActiveMembers(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 2)
            let (bob, carol) = (fixture.members[0], fixture.members[1])
            let outsider = server.client()
            await Self.expectError(403, "Forbidden") {
                _ = try await bob.setAdmins(SetAdminsInput(convoId: fixture.convoId, admins: [bob.did]))
            }
            await Self.expectError(403, "NotMember") {
                _ = try await outsider.setAdmins(SetAdminsInput(convoId: fixture.convoId, admins: []))
            }
            await Self.expectError(400, "InvalidRequest") {
                _ = try await fixture.owner.setAdmins(SetAdminsInput(convoId: fixture.convoId, admins: [outsider.did]))
            }
            await Self.expectError(400, "InvalidRequest") {
                _ = try await fixture.owner.setAdmins(SetAdminsInput(convoId: fixture.convoId, admins: ["not-a-did"]))
            }
            let set = try await fixture.owner.setAdmins(SetAdminsInput(convoId: fixture.convoId, admins: [carol.did]))
            #expect(set.convo.admins == [fixture.owner.did, carol.did])
            let epoch = try await carol.removeMember(RemoveMemberInput(
                convoId: fixture.convoId, epoch: fixture.epoch, did: bob.did, commit: Data("rm".utf8))).epoch
            #expect(epoch == fixture.epoch + 1)
            // Replacing the list drops carol.
            let cleared = try await fixture.owner.setAdmins(SetAdminsInput(convoId: fixture.convoId, admins: []))
            #expect(cleared.convo.admins == [fixture.owner.did])
            await Self.expectError(403, "Forbidden") {
                _ = try await carol.addMembers(AddMembersInput(
                    convoId: fixture.convoId, epoch: epoch, dids: [outsider.did], commit: Data("c".utf8), welcome: Data("w".utf8)))
            }
        }
    }
}
