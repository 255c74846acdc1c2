import Foundation
import ImprintServerTestSupport
import ImprintDelivery
import ImprintServer
import Logging
import Testing

/// `/openapi.json`, `/metrics`, and the OpenAPI description staying true to the router.
@Suite struct ServiceSurfaceTests {
    static var repositoryRoot: URL { ServerExecutable.repositoryRoot }

    static func openAPIOperations(_ data: Data) throws -> Set<String> {
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        return Set(paths.flatMap { path, operations in operations.keys.map { "\($0.uppercased()) \(path)" } })
    }

    @Test func everyRouteIsDescribedAndEveryDescriptionIsRouted() async throws {
        let store = try await StoreKind.sqlite.makeStore()
        let router = DeliveryServer.makeRouter(
            store: store, configuration: DeliveryServerConfiguration(serviceDID: "did:web:x"), metrics: ServerMetrics(), logger: testLogger)
        let routed = Set(router.routes.map { "\($0.method.rawValue) \($0.path.description)" })
        // The zone service's routes are described in the same document; ImprintZoneServiceTests
        // checks them against a router that serves them.
        let described = try Self.openAPIOperations(Data(OpenAPIDocument.bytes)).filter { !$0.contains("/xrpc/app.imprint.zone.") }
        #expect(routed == described)
        #expect(routed.count == DeliveryMethod.allCases.count + 3)
        try await store.shutdown()
    }

    @Test func servedDescriptionIsTheDocsCopy() async throws {
        let docs = try Data(contentsOf: Self.repositoryRoot.appendingPathComponent("docs/openapi.json"))
        #expect(Data(OpenAPIDocument.bytes) == docs)
        try await withServer(.sqlite) { server in
            let served = try await RawHTTP.send(server, .GET, "/openapi.json")
            #expect(served.status == 200)
            #expect(served.body == docs)
        }
    }

    @Test func descriptionMatchesTheWireTypes() throws {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.bytes)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        for method in DeliveryMethod.allCases {
            let operation = try #require(paths[method.path]?[method.isProcedure ? "post" : "get"], "\(method)")
            #expect(operation["operationId"] as? String == method.rawValue)
            #expect((operation["requestBody"] != nil) == method.isProcedure, "\(method)")
        }
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]])
        let message = try #require(schemas["MessageView"]?["properties"] as? [String: Any])
        let encoded = try WireJSON.encoder().encode(MessageView(
            seq: 1, epoch: 0, sender: "did:key:z6Mk", messageType: .app, hash: String(repeating: "0", count: 64), size: 1,
            sentAt: Date(), recordName: "r", commit: Data([1])))
        let keys = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any]).keys
        #expect(Set(keys) == Set(message.keys))
    }

    @Test(arguments: StoreKind.available)
    func metricsCountRequestsByRouteAndStatus(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let client = server.client()
            _ = try await client.getConvos()
            _ = try? await RawHTTP.send(server, .GET, DeliveryMethod.getConvos.path)
            let metrics = try await RawHTTP.send(server, .GET, "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.text.contains(#"imprint_http_requests_total{route="getConvos",status="200"} 1"#), "\(metrics.text)")
            #expect(metrics.text.contains(#"imprint_http_requests_total{route="getConvos",status="401"} 1"#))
            #expect(metrics.text.contains(#"imprint_rejections_total{error="AuthRequired"} 1"#))
            #expect(metrics.text.contains("imprint_http_request_duration_seconds_bucket"))
        }
    }
}
