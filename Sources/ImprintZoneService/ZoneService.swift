import Foundation
import Hummingbird
import ImprintServer
import Logging

/// The zone service, served by `imprint-server` beside the Delivery Service: same process,
/// same router and authentication, same database (its tables are migrated into the Delivery
/// Service's schema). Assets live as files under the server's data directory on SQLite, and in
/// the database on PostgreSQL, so that every instance sees every asset.
package struct ZoneService: XRPCService {
    let store: any ZoneServiceStore
    let configuration: ZoneServiceConfiguration
    let heartbeat: Duration
    let compactor: ZoneCompactor?

    /// Opens the zone service on `delivery`'s database and migrates its tables.
    /// `dataDirectory` holds blob files (SQLite) and staged uploads (both backends).
    package static func open(
        delivery: any DeliveryStore, dataDirectory: URL, configuration: ZoneServiceConfiguration = .init(),
        heartbeat: Duration = .seconds(15)
    ) async throws -> ZoneService {
        let store: any ZoneServiceStore
        if let sqlite = delivery as? SQLiteDeliveryStore {
            store = SQLiteZoneServiceStore(delivery: sqlite, dataDirectory: dataDirectory)
        } else if let postgres = delivery as? PostgresDeliveryStore {
            store = PostgresZoneServiceStore(delivery: postgres, dataDirectory: dataDirectory)
        } else {
            throw DeliveryError.internalError()
        }
        try await store.migrate()
        return ZoneService(
            store: store, configuration: configuration, heartbeat: heartbeat,
            compactor: configuration.compactionInterval.map { ZoneCompactor(store: store, interval: $0) })
    }

    package var paths: [String] { ZoneMethod.allCases.map(\.path) + (configuration.reviewPage == nil ? [] : [ReviewPageController.path]) }

    package func routes(gate: XRPCGate, metrics: ServerMetrics) -> RouteCollection<DeliveryRequestContext> {
        let routes = RouteCollection(context: DeliveryRequestContext.self)
        if let page = configuration.reviewPage { ReviewPageController(page: page).add(to: routes) }
        ZoneController(
            store: store, gate: gate, configuration: configuration, metrics: metrics, heartbeat: heartbeat,
            commentLimiter: RateLimiter(rate: configuration.commentRate, burst: configuration.commentBurst),
            capabilityReadLimiter: RateLimiter(rate: gate.rateLimiter.rate, burst: gate.rateLimiter.burst)
        ).add(to: routes)
        return routes
    }

    package func shutdown() async throws {
        await compactor?.stop()
        try await store.shutdown()
    }
}
