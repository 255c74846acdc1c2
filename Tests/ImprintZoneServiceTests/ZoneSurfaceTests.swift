import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import ImprintZoneService
import Testing

/// The served OpenAPI document describes exactly the routes of a server with the zone service.
@Suite struct ZoneSurfaceTests {
    @Test func everyZoneRouteIsDescribedAndEveryDescriptionIsRouted() async throws {
        let store = try await StoreKind.sqlite.makeStore()
        let zones = try await ZoneService.open(
            delivery: store, dataDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("imprint-zsurf-\(UUID().uuidString)"))
        let router = DeliveryServer.makeRouter(
            store: store, configuration: DeliveryServerConfiguration(serviceDID: "did:web:x"), metrics: ServerMetrics(), logger: testLogger,
            services: [zones])
        let routed = Set(router.routes.map { "\($0.method.rawValue) \($0.path.description)" })
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.bytes)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let described = Set(paths.flatMap { path, operations in operations.keys.map { "\($0.uppercased()) \(path)" } })
        #expect(routed == described)
        for method in ZoneMethod.allCases {
            #expect(routed.contains("\(method.isProcedure ? "POST" : "GET") \(method.path)"), "\(method)")
        }
        try await zones.shutdown()
        try await store.shutdown()
    }

    @Test func wrongHTTPMethodIsA405() async throws {
        try await withZoneServer(.sqlite) { server in
            let response = try await RawHTTP.send(server.server, .GET, ZoneMethod.saveRecords.path)
            #expect(response.status == 405)
            #expect(try await RawHTTP.send(server.server, .GET, "/xrpc/app.imprint.zone.nope").status == 404)
        }
    }
}
