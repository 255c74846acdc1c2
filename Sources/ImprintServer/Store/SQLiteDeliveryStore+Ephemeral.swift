import GRDB
import ImprintDelivery

extension SQLiteDeliveryStore {
    public func isActiveMember(convoId: String, did: String) async throws -> Bool {
        try await pool.read { db in
            guard try Bool.fetchOne(try db.cachedStatement(sql: "SELECT 1 FROM convos WHERE id = ?"), arguments: [convoId]) != nil else {
                throw DeliveryError.convoNotFound(convoId)
            }
            return try Self.isActiveMember(db, convoId: convoId, did: did)
        }
    }

    public func relayEphemeral(_ message: EphemeralMessage) async throws {
        ephemeralHub.publish(message)
    }

    /// One instance: its hub is every subscriber's.
    public var relaysEphemeralInProcess: Bool { true }
}
