import Foundation

/// Where the store lives, as given by `--db`: `sqlite:<path>` or `postgres://user@host:port/db`
/// (query options: `host=/socket/dir` for a Unix socket, `pool=N` for the connection pool size).
public enum DatabaseLocation: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(PostgresLocation)

    public struct PostgresLocation: Sendable, Equatable {
        public var user: String
        public var password: String?
        public var host: String
        public var port: Int
        public var database: String
        /// A directory holding the server's Unix socket (`?host=/path` form), used instead of TCP.
        public var socketDirectory: String?
        /// Connections this instance keeps at most (`?pool=N`); nil: `PostgresDeliveryStore.defaultMaximumConnections`.
        public var poolSize: Int?
    }

    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    public init(parsing text: String) throws {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw ParseError(description: "sqlite: needs a file path") }
            self = .sqlite(path: path)
            return
        }
        guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://"),
              let components = URLComponents(string: text)
        else { throw ParseError(description: "--db must be sqlite:<path> or postgres://user@host:port/db") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw ParseError(description: "postgres URL needs a database name") }
        let socket = components.queryItems?.first(where: { $0.name == "host" })?.value
        var poolSize: Int?
        if let text = components.queryItems?.first(where: { $0.name == "pool" })?.value {
            guard let size = Int(text), (1...1000).contains(size) else { throw ParseError(description: "pool must be 1...1000") }
            poolSize = size
        }
        self = .postgres(PostgresLocation(
            user: components.user ?? "postgres", password: components.password, host: components.host ?? "127.0.0.1",
            port: components.port ?? 5432, database: database, socketDirectory: socket, poolSize: poolSize))
    }
}
