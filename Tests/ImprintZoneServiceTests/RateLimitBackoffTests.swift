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
    /// Two requests at once, then one a second (after `Retry-After: 1`, one more comes in).
    static func slowServer(_ configuration: inout DeliveryServerConfiguration) {
        configuration.rateLimitBurst = 2
        configuration.rateLimitPerSecond = 1
    }

    /// The statuses of six requests sent at once by `call` (200 or the error's status): with
    /// two allowed at once and one a second, some are refused however slow the machine is.
    static func statusesOfSixAtOnce(_ call: @escaping @Sendable () async throws -> Int) async -> [Int] {
        await withTaskGroup(of: Int.self) { group in
            for _ in 0..<6 { group.addTask { (try? await call()) ?? -1 } }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    // Seconds alone; 155 s in a full run, whose first minutes starve in-process servers.
    @Test(.timeLimit(.minutes(10))) func bothClientsWaitOutARateLimitInsteadOfFailing() async throws {
        try await withServer(.sqlite, services: ZoneTestServer.zoneService(), configure: Self.slowServer) { server in
            let signer = ServiceAuthSigner()
            let delivery = server.client(signer)
            let zones = HTTPZoneStore(baseURL: server.baseURL, serviceDID: RunningServer.serviceDID, signer: signer, httpClient: TestHTTP.client)
            let started = ContinuousClock.now
            for n in 0..<3 {
                _ = try await delivery.getConvos()
                _ = try await zones.createZone("share_backoff\(n)", convoId: nil)
            }
            // Six requests against two at once and one a second: at least one wait.
            #expect(ContinuousClock.now - started >= .seconds(1))
            // With no retries, the same caller sees the 429 the server sends.
            var impatient = server.client(signer)
            impatient.rateLimitRetries = 0
            let statuses = await Self.statusesOfSixAtOnce { [impatient] in
                do {
                    _ = try await impatient.getConvos()
                    return 200
                } catch let error as DeliveryServiceError where error.name == "RateLimited" {
                    return error.status
                }
            }
            #expect(statuses.contains(429) && statuses.allSatisfy { $0 == 200 || $0 == 429 }, "\(statuses)")
            var impatientZones = zones
            impatientZones.rateLimitRetries = 0
            let zoneStatuses = await Self.statusesOfSixAtOnce { [impatientZones] in
                do {
                    _ = try await impatientZones.createZone("share_impatient\(UUID().uuidString.prefix(8).lowercased())", convoId: nil)
                    return 200
                } catch let error as ZoneError {
                    return error.httpStatus ?? 0
                }
            }
            #expect(zoneStatuses.contains(429) && zoneStatuses.allSatisfy { $0 == 200 || $0 == 429 }, "\(zoneStatuses)")
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
