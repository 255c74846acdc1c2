import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import ImprintZoneService
import ImprintZones
import Testing

/// A caller past its rate limit gets 429 `RateLimited` with `Retry-After`; `DeliveryClient` and
/// `HTTPZoneStore` wait and send again (`RateLimitBackoff`) instead of failing, up to their
/// `rateLimitRetries` (`KeyPackageTests` checks that a 429 waiting cannot cure, `TooManyKeyPackages`,
/// is handed over at once).
@Suite struct RateLimitBackoffTests {
    /// Two requests at once, then one a second (after `Retry-After: 1`, three come in).
    static func slowServer(_ configuration: inout DeliveryServerConfiguration) {
        configuration.rateLimitBurst = 2
        configuration.rateLimitPerSecond = 3
    }

    @Test(.timeLimit(.minutes(2))) func bothClientsWaitOutARateLimitInsteadOfFailing() async throws {
        try await withServer(.sqlite, services: ZoneTestServer.zoneService(), configure: Self.slowServer) { server in
            let signer = ServiceAuthSigner()
            let delivery = server.client(signer)
            let zones = HTTPZoneStore(baseURL: server.baseURL, serviceDID: RunningServer.serviceDID, signer: signer, httpClient: TestHTTP.client)
            let started = ContinuousClock.now
            for n in 0..<4 {
                _ = try await delivery.getConvos()
                _ = try await zones.createZone("share_backoff\(n)", convoId: nil)
            }
            // Eight requests against two at once and three a second: at least one wait.
            #expect(ContinuousClock.now - started >= .seconds(1))
            // With no retries, the same caller sees the 429 the server sends.
            var impatient = server.client(signer)
            impatient.rateLimitRetries = 0
            var statuses: [Int] = []
            for _ in 0..<6 {
                do {
                    _ = try await impatient.getConvos()
                    statuses.append(200)
                } catch let error as DeliveryServiceError {
                    statuses.append(error.status)
                    #expect(error.name == "RateLimited")
                }
            }
            #expect(statuses.contains(429), "\(statuses)")
            var impatientZones = zones
            impatientZones.rateLimitRetries = 0
            var zoneStatuses: [Int] = []
            for n in 0..<6 {
                do {
                    _ = try await impatientZones.createZone("share_impatient\(n)", convoId: nil)
                    zoneStatuses.append(200)
                } catch let error as ZoneError {
                    zoneStatuses.append(error.httpStatus ?? 0)
                }
            }
            #expect(zoneStatuses.contains(429), "\(zoneStatuses)")
        }
    }

    @Test func retryAfterIsReadAsSecondsAndBounded() {
        #expect(RateLimitBackoff.wait(retryAfter: "2") == .seconds(2))
        #expect(RateLimitBackoff.wait(retryAfter: " 0 ") == .zero)
        #expect(RateLimitBackoff.wait(retryAfter: "3600") == RateLimitBackoff.maximumWait)
        #expect(RateLimitBackoff.wait(retryAfter: nil) == RateLimitBackoff.defaultWait)
        #expect(RateLimitBackoff.wait(retryAfter: "Wed, 21 Oct 2026 07:28:00 GMT") == RateLimitBackoff.defaultWait)
        #expect(RateLimitBackoff.wait(retryAfter: "-5") == RateLimitBackoff.defaultWait)
    }
}
