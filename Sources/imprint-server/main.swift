import ArgumentParser
import Foundation
import ImprintReviewViewer
import ImprintServer
import ImprintZoneService
import Logging
import ServiceLifecycle

/// `imprint-server`: the Delivery Service and, beside it, the zone service.
struct ImprintServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imprint-server", abstract: "The Imprint Delivery Service and zone service (XRPC over HTTP).")

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0 picks a free one).") var port = 8080
    @Option(help: "sqlite:<path> or postgres://user@host:port/db (default: SQLite under --data).") var db: String?
    @Option(name: .customLong("service-did"), help: "The service DID tokens must name as aud (default did:web:<host>).")
    var serviceDID: String?
    @Option(help: "Directory for the default SQLite database, zone asset files and staged uploads.") var data = "./data"
    @Option(name: .customLong("rate-limit"), help: "Requests per second each caller DID may make on average.")
    var rateLimit: Double = 100
    @Option(name: .customLong("rate-burst"), help: "Requests a caller DID may make in one burst.")
    var rateBurst: Double = 500
    @Option(name: .customLong("zone-quota"), help: "Bytes of zone assets each owner may keep (default 20 GiB).")
    var zoneQuota: Int = 20 << 30
    @Option(name: .customLong("compaction-interval"),
            help: "Seconds between the server's compaction runs over shared zones whose members all passed a newer snapshot (0: only when a member asks).")
    var compactionInterval: Double = 60
    @Option(name: .customLong("event-retention-days"),
            help: "Days events stay for subscribers to resume from (0: forever); messages are kept until compaction, not by this.")
    var eventRetentionDays: Double = 30
    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may take to send a request head, or idle between requests.")
    var idleTimeout: Double = 30
    @Option(name: .customLong("body-timeout"), help: "Seconds a request body may pause between parts (it must end within 120 s).")
    var bodyTimeout: Double = 10
    @Option(name: .customLong("shutdown-grace"),
            help: "Seconds SIGTERM/SIGINT wait for requests in flight before they are cancelled and the server exits.")
    var shutdownGrace: Double = 30
    @Option(name: .customLong("max-connections-per-address"), help: "Unauthenticated connections each client IP address may hold (a connection stops counting once a request on it passes the token check).")
    var maxConnectionsPerAddress = 256
    @Flag(name: .customLong("benchmark-endpoints"),
          help: "Serve the two byte-moving routes imprint-bench measures its ceiling with (app.imprint.bench.*); never in production.")
    var benchmarkEndpoints = false

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
            return handler
        }
        let logger = Logger(label: "imprint-server")
        var location: DatabaseLocation?
        if let db {
            do {
                location = try DatabaseLocation(parsing: db)
            } catch {
                throw ValidationError("\(error)")
            }
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be in 0...65535") }
        guard rateLimit > 0, rateBurst >= 1 else { throw ValidationError("--rate-limit must be > 0 and --rate-burst >= 1") }
        var configuration = DeliveryServerConfiguration(serviceDID: serviceDID, host: host, port: port)
        configuration.rateLimitPerSecond = rateLimit
        configuration.rateLimitBurst = rateBurst
        guard idleTimeout > 0, bodyTimeout > 0, maxConnectionsPerAddress >= 1 else {
            throw ValidationError("--idle-timeout and --body-timeout must be > 0, --max-connections-per-address >= 1")
        }
        configuration.connectionLimits.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
        configuration.connectionLimits.bodyIdleTimeout = .milliseconds(Int64(bodyTimeout * 1000))
        configuration.connectionLimits.maxConnectionsPerAddress = maxConnectionsPerAddress
        guard shutdownGrace >= 0, shutdownGrace.isFinite else { throw ValidationError("--shutdown-grace must not be negative") }
        guard zoneQuota >= 0 else { throw ValidationError("--zone-quota must not be negative") }
        guard compactionInterval >= 0, compactionInterval.isFinite else { throw ValidationError("--compaction-interval must not be negative") }
        guard eventRetentionDays >= 0, eventRetentionDays.isFinite else { throw ValidationError("--event-retention-days must not be negative") }
        configuration.eventRetention = eventRetentionDays > 0 ? .seconds(eventRetentionDays * 86_400) : nil
        // The data directory holds the zone service's asset files, and the default SQLite database.
        do {
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        } catch {
            throw ValidationError(StartupFailure.dataDirectory(data, error))
        }
        guard access(data, W_OK) == 0 else {
            throw ValidationError("cannot use data directory \(data): not writable; choose a writable directory with --data (or --db)")
        }
        let store = try await StoreFactory.open(location ?? .sqlite(path: (data as NSString).appendingPathComponent("delivery.sqlite")), logger: logger)
        var zoneConfiguration = ZoneServiceConfiguration()
        zoneConfiguration.quotaBytes = zoneQuota
        zoneConfiguration.compactionInterval = compactionInterval > 0 ? .milliseconds(Int64(compactionInterval * 1000)) : nil
        let reviewPage = ViewerPage.linkPage()
        zoneConfiguration.reviewPage = ReviewViewerPage(html: reviewPage, contentSecurityPolicy: ViewerPage.contentSecurityPolicy(for: ViewerPage.linkEnvelope))
        let zones = try await ZoneService.open(
            delivery: store, dataDirectory: URL(fileURLWithPath: data, isDirectory: true), configuration: zoneConfiguration)
        let serviceDID = configuration.serviceDID
        let app = DeliveryServer.makeApplication(store: store, configuration: configuration, logger: logger, services: benchmarkEndpoints ? [zones, ThroughputCeiling()] : [zones]) { port in
            logger.info("listening", metadata: ["host": "\(host)", "port": "\(port)", "did": "\(serviceDID)"])
        }
        // A graceful stop ends event streams and closes idle connections at once, then waits
        // for requests in flight, at most `shutdownGrace`: a client that stalls mid-request
        // does not keep the server from exiting.
        var groupConfiguration = ServiceGroupConfiguration(
            services: [.init(service: app)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(Int64(shutdownGrace * 1000))
        let group = ServiceGroup(configuration: groupConfiguration)
        try await group.run()
        try await zones.shutdown()
        try await store.shutdown()
    }
}

// Help exits 0; usage and startup errors exit 1 with one `error:` line on stderr.
var parsed: ImprintServerCommand?
do {
    let command = try ImprintServerCommand.parse()
    parsed = command
    try await command.run()
} catch {
    if ImprintServerCommand.exitCode(for: error) == .success {
        ImprintServerCommand.exit(withError: error)
    }
    let explained = parsed.flatMap { StartupFailure.message(for: error, host: $0.host, port: $0.port, data: $0.data) }
    let message = explained ?? ImprintServerCommand.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(1)
}
