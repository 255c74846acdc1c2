import AsyncHTTPClient
import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
import ImprintEncoding
#endif

/// Closed-loop load: `connections` workers each send their next request as soon as the last
/// answer arrives, until `total` requests are done. Requests are prepared up front (tokens are
/// single-use), so signing is not part of the measured time.
struct LoadRun: Sendable {
    struct Result: Sendable {
        var requests: Int
        var failures: Int
        var seconds: Double
        var latencies: [Double]
        /// CPU time (user + system) this process used during the run: the in-process server and
        /// the load generator together, not a database server in another process.
        var cpuSeconds: Double

        var requestsPerSecond: Double { Double(requests) / seconds }

        /// This process's CPU time per request, in microseconds. Unlike throughput it does not
        /// depend on how much of a shared machine the run got.
        var cpuMicrosecondsPerRequest: Double { requests == 0 ? 0 : cpuSeconds * 1e6 / Double(requests) }

        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            let sorted = latencies.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
    }

    let client: HTTPClient

    func run(workers: [[HTTPClientRequest]]) async throws -> Result {
        let cpuAtStart = Self.processCPUSeconds()
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
                        latencies.append(elapsed.inMilliseconds)
                    }
                    return (failures, latencies)
                }
            }
            return try await group.reduce(into: [(Int, [Double])]()) { $0.append($1) }
        }
        let elapsed = ContinuousClock.now - start
        let cpu = Self.processCPUSeconds() - cpuAtStart
        let latencies = perWorker.flatMap(\.1)
        return Result(
            requests: latencies.count, failures: perWorker.map(\.0).reduce(0, +),
            seconds: elapsed.inSeconds,
            latencies: latencies, cpuSeconds: cpu)
    }

    /// User + system CPU seconds used by this process so far (`getrusage(RUSAGE_SELF)`; Linux).
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
