import AsyncHTTPClient
import Foundation
import GRDB
import ImprintDelivery
import ImprintServer
import PostgresNIO
import ImprintEncoding

/// `--roster 10,150,1000`: what one convo of N members costs the Delivery Service, over
/// loopback HTTP on the configured store. For each N, in a convo of its own:
///
/// - `addMembers` of N − 1 members in one call, with a Welcome of `300 × N + 2,000` bytes
///   (about what an RFC 9420 Welcome carrying an N-leaf ratchet tree weighs);
/// - `sendMessage` by one member, `sends` times in a row (median and p99 latency);
/// - what each stored: event rows, payload bytes actually stored (each payload and Welcome
///   once), and the bytes the same events would take as one copy per recipient (the layout
///   before payloads were stored once), computed from the same rows.
struct RosterRun {
    let baseURL: String
    let serviceDID: String
    let http: HTTPClient
    let store: any DeliveryStore
    var sends = 200

    struct Footprint {
        var eventRows = 0
        var storedBytes = 0
        var perRecipientBytes = 0
    }

    func footprint() async throws -> Footprint {
        let rows = "SELECT COUNT(*) FROM events"
        let stored = "SELECT COALESCE((SELECT SUM(LENGTH(payload)) FROM event_payloads), 0) + COALESCE((SELECT SUM(LENGTH(welcome)) FROM welcome_blobs), 0)"
        let copied = """
            SELECT COALESCE((SELECT SUM(LENGTH(p.payload)) FROM events e JOIN event_payloads p ON p.id = e.payload_id), 0)
                 + COALESCE((SELECT SUM(LENGTH(b.welcome)) FROM welcomes w JOIN welcome_blobs b ON b.id = w.blob_id), 0)
            """
        if let sqlite = store as? SQLiteDeliveryStore {
            return try await sqlite.pool.read { db in
                Footprint(eventRows: try Int.fetchOne(db, sql: rows) ?? 0, storedBytes: try Int.fetchOne(db, sql: stored) ?? 0,
                          perRecipientBytes: try Int.fetchOne(db, sql: copied) ?? 0)
            }
        }
        guard let postgres = store as? PostgresDeliveryStore else { return Footprint() }
        func one(_ sql: String) async throws -> Int {
            var value = 0
            for try await row in try await postgres.client.query(PostgresQuery(unsafeSQL: "SELECT (\(sql))::BIGINT"), logger: .init(label: "bench")).decode(Int.self) {
                value = row
            }
            return value
        }
        return Footprint(eventRows: try await one(rows), storedBytes: try await one(stored), perRecipientBytes: try await one(copied))
    }

    func measure(members count: Int) async throws -> [String: Any] {
        let signers = (0..<count).map { _ in ServiceAuthSigner() }
        let owner = DeliveryClient(baseURL: baseURL, serviceDID: serviceDID, signer: signers[0], httpClient: http)
        let convo = try await owner.createConvo(CreateConvoInput(cipherSuite: 1)).convo
        let welcome = Data((0..<(300 * count + 2_000)).map { UInt8(truncatingIfNeeded: $0 &* 31) })

        let beforeAdd = try await footprint()
        let addStart = ContinuousClock.now
        let added = try await owner.addMembers(AddMembersInput(
            convoId: convo.id, epoch: 0, dids: signers.dropFirst().map(\.did), commit: Data(repeating: 7, count: 2_000), welcome: welcome))
        let addTime = ContinuousClock.now - addStart
        let afterAdd = try await footprint()

        var latencies: [Double] = []
        for n in 0..<sends {
            let start = ContinuousClock.now
            _ = try await owner.sendMessage(SendMessageInput(
                convoId: convo.id, epoch: added.epoch, messageType: .app,
                hash: String(repeating: "0", count: 56) + String(format: "%08x", n), size: 1024))
            latencies.append((ContinuousClock.now - start).inMilliseconds)
        }
        let afterSends = try await footprint()
        latencies.sort()

        let reader = DeliveryClient(baseURL: baseURL, serviceDID: serviceDID, signer: signers[count - 1], httpClient: http)
        let readStart = ContinuousClock.now
        let got = try await reader.getWelcome(convoId: convo.id)
        let readTime = ContinuousClock.now - readStart
        guard got.welcome == welcome else { throw BenchFailure("the Welcome read back differs") }

        return [
            "members": count,
            "welcome_bytes": welcome.count,
            "add_ms": (addTime.inMilliseconds * 10).rounded() / 10,
            "add_event_rows": afterAdd.eventRows - beforeAdd.eventRows,
            "add_stored_bytes": afterAdd.storedBytes - beforeAdd.storedBytes,
            "add_bytes_if_per_recipient": afterAdd.perRecipientBytes - beforeAdd.perRecipientBytes,
            "send_p50_ms": (latencies[latencies.count / 2] * 100).rounded() / 100,
            "send_p99_ms": (latencies[min(latencies.count - 1, latencies.count * 99 / 100)] * 100).rounded() / 100,
            "send_event_rows": (afterSends.eventRows - afterAdd.eventRows) / sends,
            "send_stored_bytes": (afterSends.storedBytes - afterAdd.storedBytes) / sends,
            "send_bytes_if_per_recipient": (afterSends.perRecipientBytes - afterAdd.perRecipientBytes) / sends,
            "get_welcome_ms": (readTime.inMilliseconds * 100).rounded() / 100,
        ]
    }

}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
