import ArgumentParser
import AsyncHTTPClient
import Foundation
import ImprintDelivery
import ImprintServer
import Logging
import NIOCore
import NIOFoundationCompat
import ServiceLifecycle

/// `imprint-delivery-bench`: sendMessage throughput at N connections against the ceiling of
/// the same server answering `/xrpc/_health`, on SQLite or PostgreSQL. Build with `-c release`.
struct DeliveryBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imprint-delivery-bench", abstract: "Load benchmark: sendMessage vs /xrpc/_health.")

    @Option(help: "sqlite:<path> or postgres://user@host:port/db (default: SQLite in a temporary directory).") var db: String?
    @Option(help: "Concurrent connections.") var connections = 64
    @Option(help: "Requests per phase.") var requests = 20_000
    @Option(help: "Members per convo: connections are grouped into convos of this size (1 worker per member).")
    var membersPerConvo = 4
    @Option(help: "Instead of the load run: roster sizes to measure addMembers and sendMessage at, e.g. 10,150,1000.")
    var roster: String?
    @Flag(help: "Print one JSON object.") var json = false

    func run() async throws {
        var logger = Logger(label: "imprint-delivery-bench")
        logger.logLevel = .error
        let location: DatabaseLocation
        if let db {
            location = try DatabaseLocation(parsing: db)
        } else {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-bench-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            location = .sqlite(path: directory.appendingPathComponent("delivery.sqlite").path)
        }
        let store = try await StoreFactory.open(location, logger: logger)
        var configuration = DeliveryServerConfiguration(serviceDID: "did:web:bench.test", host: "127.0.0.1", port: 0)
        // Every connection is its own member; lift the per-DID limit out of the measurement.
        configuration.rateLimitPerSecond = 1_000_000
        configuration.rateLimitBurst = 1_000_000
        configuration.connectionLimits.maxConnectionsPerAddress = 1_000_000
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = DeliveryServer.makeApplication(store: store, configuration: configuration, logger: logger) {
            portContinuation.yield($0)
            portContinuation.finish()
        }
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let server = Task { try await group.run() }
        var portIterator = ports.makeAsyncIterator()
        guard let port = await portIterator.next() else { throw ValidationError("server did not start") }
        let baseURL = "http://127.0.0.1:\(port)"

        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)

        do {
            if let roster {
                let sizes = roster.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
                guard !sizes.isEmpty, sizes.allSatisfy({ $0 >= 2 }) else { throw ValidationError("--roster takes sizes of at least 2, e.g. 10,150,1000") }
                let run = RosterRun(baseURL: baseURL, serviceDID: configuration.serviceDID, http: http, store: store)
                var rows: [[String: Any]] = []
                for size in sizes { rows.append(try await run.measure(members: size)) }
                let storeName = if case .postgres = location { "postgres" } else { "sqlite" }
                let result: [String: Any] = ["store": storeName, "roster": rows]
                let data = try JSONSerialization.data(withJSONObject: result, options: json ? [.sortedKeys] : [.sortedKeys, .prettyPrinted])
                print(String(decoding: data, as: UTF8.self))
                try await http.shutdown()
                await group.triggerGracefulShutdown()
                try await server.value
                try await store.shutdown()
                return
            }
            let members = (0..<connections).map { _ in ServiceAuthSigner() }
            let groupSize = max(1, min(membersPerConvo, connections))
            var convoOfWorker: [(id: String, epoch: Int, firstSeq: Int)] = []
            for start in stride(from: 0, to: connections, by: groupSize) {
                let group = Array(members[start..<min(start + groupSize, connections)])
                let owner = DeliveryClient(baseURL: baseURL, serviceDID: configuration.serviceDID, signer: group[0], httpClient: http)
                let convo = try await owner.createConvo(CreateConvoInput(title: "bench", cipherSuite: 1)).convo
                var epoch = 0
                var seq = 0
                if group.count > 1 {
                    let added = try await owner.addMembers(AddMembersInput(
                        convoId: convo.id, epoch: 0, dids: group.dropFirst().map(\.did), commit: Data([1]), welcome: Data([2])))
                    epoch = added.epoch
                    seq = added.seq
                }
                convoOfWorker += Array(repeating: (convo.id, epoch, seq), count: group.count)
            }
            let checker = DeliveryClient(baseURL: baseURL, serviceDID: configuration.serviceDID, signer: members[0], httpClient: http)
            let perWorker = max(1, requests / connections)
            let health = (0..<connections).map { _ in
                (0..<perWorker).map { _ in HTTPClientRequest(url: baseURL + DeliveryPath.health) }
            }
            let sends = try members.enumerated().map { index, signer in
                try (0..<perWorker).map { n in
                    var request = HTTPClientRequest(url: baseURL + DeliveryMethod.sendMessage.path)
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.headers.add(
                        name: "Authorization",
                        value: "Bearer " + (try signer.token(audience: configuration.serviceDID, method: DeliveryMethod.sendMessage.nsid, lifetime: 300)))
                    let input = SendMessageInput(
                        convoId: convoOfWorker[index].id, epoch: convoOfWorker[index].epoch, messageType: .app,
                        hash: String(repeating: "0", count: 56) + String(format: "%04x%04x", index, n % 0xffff), size: 1024)
                    request.body = .bytes(ByteBuffer(data: try WireJSON.encoder().encode(input)))
                    return request
                }
            }
            let load = LoadRun(client: http)
            _ = try await load.run(workers: health.map { Array($0.prefix(50)) })  // warm-up
            let ceiling = try await load.run(workers: health)
            let sent = try await load.run(workers: sends)
            // Every message of the first convo is present, seqs 1...n without a gap.
            var seqs: [Int] = []
            var cursor: Int? = 0
            while let since = cursor {
                let page = try await checker.getMessages(convoId: convoOfWorker[0].id, sinceSeq: since, limit: 1000)
                seqs += page.messages.map(\.seq)
                cursor = page.cursor
            }
            let expected = convoOfWorker[0].firstSeq + perWorker * min(groupSize, connections)
            let gapless = seqs == Array(1...max(1, expected)) || (expected == 0 && seqs.isEmpty)

            let storeName = if case .postgres = location { "postgres" } else { "sqlite" }
            let result: [String: Any] = [
                "store": storeName, "connections": connections, "members_per_convo": groupSize, "requests_per_phase": perWorker * connections,
                "health_rps": ceiling.requestsPerSecond.rounded(), "send_rps": sent.requestsPerSecond.rounded(),
                "ratio": (sent.requestsPerSecond / ceiling.requestsPerSecond * 1000).rounded() / 1000,
                "send_p50_ms": (sent.percentile(0.5) * 100).rounded() / 100, "send_p99_ms": (sent.percentile(0.99) * 100).rounded() / 100,
                "health_p50_ms": (ceiling.percentile(0.5) * 100).rounded() / 100,
                "health_cpu_us": ceiling.cpuMicrosecondsPerRequest.rounded(), "send_cpu_us": sent.cpuMicrosecondsPerRequest.rounded(),
                "send_failures": sent.failures, "health_failures": ceiling.failures, "seq_gapless": gapless,
            ]
            if json {
                let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                for (key, value) in result.sorted(by: { $0.key < $1.key }) { print("\(key): \(value)") }
            }
        } catch {
            try? await http.shutdown()
            await group.triggerGracefulShutdown()
            _ = try? await server.value
            try? await store.shutdown()
            throw error
        }
        try await http.shutdown()
        await group.triggerGracefulShutdown()
        try await server.value
        try await store.shutdown()
    }
}

do {
    let command = try DeliveryBench.parse()
    try await command.run()
} catch {
    DeliveryBench.exit(withError: error)
}
