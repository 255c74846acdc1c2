import Foundation
import ImprintDelivery
import Logging
import PostgresNIO

extension PostgresDeliveryStore {
    static let ephemeralChannel = "imprint_ephemeral"

    public func isActiveMember(convoId: String, did: String) async throws -> Bool {
        let row = try await Self.single(Bool.self, client.query(
            "SELECT COALESCE((SELECT active FROM members WHERE convo_id = \(convoId) AND did = \(did)), false) FROM convos WHERE id = \(convoId)",
            logger: logger))
        guard let row else { throw DeliveryError.convoNotFound(convoId) }
        return row
    }

    /// `NOTIFY imprint_ephemeral` with the message as JSON (a 2 KiB message is under 3 KiB
    /// of base64, well inside PostgreSQL's 8000-byte payload limit); every instance's listener,
    /// this one's included, hands it to its hub. Nothing is written to a table.
    public func relayEphemeral(_ message: EphemeralMessage) async throws {
        let payload = String(decoding: try WireJSON.encoder().encode(message), as: UTF8.self)
        guard payload.utf8.count <= EventNotificationPayload.maximumBytes else {
            throw DeliveryError.invalidRequest("the ephemeral message is too large to relay")
        }
        try await client.query("SELECT pg_notify(\(Self.ephemeralChannel), \(payload))", logger: logger)
    }

    /// The listener that feeds `hub` from every instance's relays.
    static func listenForEphemeralMessages(client: PostgresClient, hub: EphemeralHub, logger: Logger) -> Task<Void, Never> {
        listen(on: ephemeralChannel, client: client, logger: logger) { notifications in
            for try await notification in notifications {
                guard let message = try? WireJSON.decoder().decode(EphemeralMessage.self, from: Data(notification.payload.utf8)) else {
                    logger.warning("ignored an undecodable ephemeral notification")
                    continue
                }
                hub.publish(message)
            }
        }
    }

    /// `LISTEN channel` on a connection of its own, `consume` reading the notifications;
    /// reconnects a second after the connection is lost, until the task is cancelled.
    static func listen(
        on channel: String, client: PostgresClient, logger: Logger,
        _ consume: @escaping @Sendable (PostgresNotificationSequence) async throws -> Void
    ) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await connection.listen(on: channel) { notifications in try await consume(notifications) }
                    }
                } catch {
                    if Task.isCancelled { break }
                    logger.warning("\(channel) listener lost its connection; retrying", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }
}
