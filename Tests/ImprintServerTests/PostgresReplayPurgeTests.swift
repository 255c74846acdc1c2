import Foundation
import ImprintServerTestSupport
import ImprintDelivery
@testable import ImprintServer
import PostgresNIO
import Testing

/// `imprint_send_message` records jti keys itself, so the periodic purge of expired keys must
/// also run on that path, or a sendMessage-only workload would grow `token_replays` forever.
@Suite(.enabled(if: StoreKind.postgresURL != nil, "IMPRINT_TEST_POSTGRES_URL not set: PostgreSQL replay purge NOT TESTED"))
struct PostgresReplayPurgeTests {
    @Test func sendMessagePurgesExpiredReplayKeys() async throws {
        let location = try await PostgresTestDatabase.create()
        let server = try await RunningServer.start(store: try await StoreFactory.open(.postgres(location), logger: testLogger))
        let reader = try await PostgresTestDatabase.connect(to: location)
        do {
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            _ = try await fixture.owner.sendMessage(SendMessageInput(
                convoId: fixture.convoId, epoch: fixture.epoch, messageType: .app, hash: fakeHash(1), size: 1))
            func keys() async throws -> [String] {
                var keys: [String] = []
                for try await key in try await reader.query("SELECT key FROM token_replays ORDER BY key", logger: testLogger).decode(String.self) {
                    keys.append(key)
                }
                return keys
            }
            #expect(try await keys().count >= 3)  // createConvo, addMembers, sendMessage

            // An hour later every earlier token has expired; the next send clears them out.
            let later = Int64(Date().timeIntervalSince1970) + 3600
            let token = TokenAdmission(issuer: fixture.owner.did, jti: "later", forgetAfter: later + 120, now: later)
            let output = try await server.store.sendMessage(
                NewMessage(
                    convoId: fixture.convoId, sender: fixture.owner.did, epoch: fixture.epoch, messageType: .app,
                    hash: fakeHash(2), size: 2, recordName: nil, now: Date()),
                admitting: token)
            #expect(output.seq == 3)
            #expect(try await keys() == [token.replayKey])
            try await reader.close()
            try await server.stop()
        } catch {
            try? await reader.close()
            try? await server.stop()
            throw error
        }
    }
}
