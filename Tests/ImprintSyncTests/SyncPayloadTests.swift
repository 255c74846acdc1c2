@testable import ImprintSync
import Testing

/// The record payload's layout: every kind round-trips, the bodies of the kinds added for
/// missing changes and admins reject malformed bytes with a typed error, and a kind this
/// version does not know is recognised as such (so the pull skips it) rather than as damage.
@Suite struct SyncPayloadTests {
    @Test func everyKindRoundTripsAndUnknownKindsAreRecognised() throws {
        for kind in [SyncPayload.Kind.changes, .snapshot, .assets, .syncRequest, .syncReply, .admins] {
            let bytes = SyncPayload(kind: kind, body: [1, 2, 3]).encoded()
            #expect(try SyncPayload(decoding: bytes) == SyncPayload(kind: kind, body: [1, 2, 3]))
            #expect(SyncPayload.unknownKind(in: bytes) == nil)
        }
        var future = SyncPayload(kind: .changes, body: [1]).encoded()
        future[SyncPayload.magic.count] = 99
        #expect(SyncPayload.unknownKind(in: future) == 99)
        #expect(throws: SyncError.self) { try SyncPayload(decoding: future) }
        #expect(SyncPayload.unknownKind(in: [0x49, 0x4D]) == nil, "too short")
        #expect(SyncPayload.unknownKind(in: Array("XYZ\u{1}".utf8) + [99]) == nil, "not a payload")
    }

    @Test func theNewBodiesRoundTripAndRejectDamage() throws {
        let request = MissingChangesRequest(targets: ["did:key:a", "did:key:b"], message: [0x42, 0, 0])
        #expect(try MissingChangesRequest(decoding: request.encoded()) == request)
        let answer = MissingChangesAnswer(requester: "did:key:a", message: [0x42, 1])
        #expect(try MissingChangesAnswer(decoding: answer.encoded()) == answer)
        let admins = AdminList(admins: ["did:key:a", "did:key:b"])
        #expect(try AdminList(decoding: admins.encoded()) == admins)
        #expect(throws: SyncError.self) { try AdminList(decoding: AdminList(admins: []).encoded()) }
        let damaged: [[UInt8]] = [Array(request.encoded().dropLast()), request.encoded() + [0], Array(request.encoded().dropFirst())]
        for bytes in damaged {
            #expect(throws: SyncError.self) { _ = try MissingChangesRequest(decoding: bytes) }
        }
        #expect(throws: SyncError.self) { _ = try MissingChangesAnswer(decoding: Array(answer.encoded().dropLast())) }
        #expect(throws: SyncError.self) { _ = try AdminList(decoding: Array(admins.encoded().dropLast())) }
    }
}
