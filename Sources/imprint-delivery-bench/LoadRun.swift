import AsyncHTTPClient
import Foundation
import NIOCore

/// Closed-loop load: `connections` workers each send their next request as soon as the last
/// answer arrives, until `total` requests are done. Requests are prepared up front (tokens are
/// single-use), so signing is not part of the measured time.
struct LoadRun: Sendable {
    struct Result: Sendable {
        var requests: Int
        var failures: Int
        var seconds: Double
        var latencies: [Double]

        var requestsPerSecond: Double { Double(requests) / seconds }

        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            let sorted = latencies.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
    }

    let client: HTTPClient

    func run(workers: [[HTTPClientRequest]]) async throws -> Result {
        let start = ContinuousClock.now
        let perWorker = try await withThrowingTaskGroup(of: (Int, [Double]).self) { group in
            for requests in workers {
                group.addTask {
                    var failures = 0
                    var latencies: [Double] = []
                    latencies.reserveCapacity(requests.count)
                    for request in requests {
                        let sent = ContinuousClock.now
                        let response = try await client.execute(request, timeout: .seconds(30))
                        _ = try await response.body.collect(upTo: 1 << 20)
                        if response.status != .ok { failures += 1 }
                        let elapsed = ContinuousClock.now - sent
                        latencies.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
                    }
                    return (failures, latencies)
                }
            }
            return try await group.reduce(into: [(Int, [Double])]()) { $0.append($1) }
        }
        let elapsed = ContinuousClock.now - start
        let latencies = perWorker.flatMap(\.1)
        return Result(
            requests: latencies.count, failures: perWorker.map(\.0).reduce(0, +),
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            latencies: latencies)
    }
}
