import Logging

/// Opens and migrates the store a `DatabaseLocation` names.
public enum StoreFactory {
    public static func open(_ location: DatabaseLocation, logger: Logger) async throws -> any DeliveryStore {
        let store: any DeliveryStore
        switch location {
        case .sqlite(let path): store = try SQLiteDeliveryStore(path: path)
        case .postgres(let postgres): store = PostgresDeliveryStore(location: postgres, logger: logger)
        }
        do {
            try await store.migrate()
        } catch {
            try? await store.shutdown()
            throw error
        }
        return store
    }
}
