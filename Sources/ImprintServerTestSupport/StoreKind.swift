import Foundation
import Testing
import ImprintServer
import Logging
import PostgresNIO

/// The store backends the behavioural suite runs against.
public enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    public var testDescription: String { rawValue }

    public static let postgresURLVariable = "IMPRINT_TEST_POSTGRES_URL"

    public static var postgresURL: String? {
        ProcessInfo.processInfo.environment[postgresURLVariable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Restricts ``available`` to the stores it names, comma-separated (`postgres`): for a
    /// long run of one parameterised test on one backend.
    public static let onlyVariable = "IMPRINT_TEST_STORES"

    /// SQLite always; PostgreSQL when `IMPRINT_TEST_POSTGRES_URL` names a server
    /// (scripts/test.sh starts one through scripts/with-postgres.sh); of those, only the ones
    /// `IMPRINT_TEST_STORES` names when it is set.
    public static let available: [StoreKind] = {
        let all = configured
        guard let only = ProcessInfo.processInfo.environment[onlyVariable], !only.isEmpty else { return all }
        let named = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        return all.filter { named.contains($0.rawValue) }
    }()

    private static let configured: [StoreKind] = {
        if postgresURL == nil {
            let warning = """

            ************************************************************************
            WARNING: \(postgresURLVariable) is not set: every PostgreSQL variant of
            the delivery-store suite is SKIPPED. Run through scripts/with-postgres.sh
            (scripts/test.sh does) to test PostgreSQL.
            ************************************************************************

            """
            FileHandle.standardError.write(Data(warning.utf8))
            return [.sqlite]
        }
        return [.sqlite, .postgres]
    }()

    /// A new, empty, migrated store of this kind.
    public func makeStore() async throws -> any DeliveryStore {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imprint-ds-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return try await StoreFactory.open(.sqlite(path: directory.appendingPathComponent("delivery.sqlite").path), logger: testLogger)
        case .postgres:
            return try await StoreFactory.open(.postgres(try await PostgresTestDatabase.create()), logger: testLogger)
        }
    }
}

public let testLogger: Logger = {
    var logger = Logger(label: "imprint-server-tests")
    logger.logLevel = ProcessInfo.processInfo.environment["IMPRINT_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
    return logger
}()

/// Creates a fresh database per test in the server `IMPRINT_TEST_POSTGRES_URL` names.
public enum PostgresTestDatabase {
    public static func serverLocation() throws -> DatabaseLocation.PostgresLocation {
        guard let url = StoreKind.postgresURL else { throw SetupError(reason: "\(StoreKind.postgresURLVariable) not set") }
        guard case .postgres(let location) = try DatabaseLocation(parsing: url) else {
            throw SetupError(reason: "\(StoreKind.postgresURLVariable) is not a postgres:// URL")
        }
        return location
    }

    /// How long a test waits for the server to accept a connection. postgres-nio's default, 10 s,
    /// is shorter than a connection can take when the full test run shares two cores with
    /// PostgreSQL (a run failed on it); a server that is really down still fails the test.
    static let connectTimeout = TimeAmount.seconds(60)

    /// Another store on the same database: a second stateless instance.
    public static func create() async throws -> DatabaseLocation.PostgresLocation {
        var location = try serverLocation()
        let name = "imprint_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: .disable)
        configuration.options.connectTimeout = connectTimeout
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: testLogger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: testLogger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        location.database = name
        return location
    }

    /// A plain connection to `location`, for tests that play a concurrent writer by hand.
    public static func connect(to location: DatabaseLocation.PostgresLocation) async throws -> PostgresConnection {
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: .disable)
        configuration.options.connectTimeout = connectTimeout
        return try await PostgresConnection.connect(configuration: configuration, id: 2, logger: testLogger)
    }

    public struct SetupError: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }
}
