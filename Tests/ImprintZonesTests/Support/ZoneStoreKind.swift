import Foundation
@testable import ImprintZones
import ImprintTestSupport
import Testing

/// The zone stores the conformance suite runs against (the pattern of ImprintServerTests'
/// `StoreKind`). `httpLoopback` is `HTTPZoneStore` over real HTTP to `LoopbackZoneServer`;
/// the entry for the real zone service (`imprint-server`) is added where that module is.
enum ZoneStoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemory
    case folder
    case httpLoopback

    var testDescription: String { rawValue }

    static let all: [ZoneStoreKind] = allCases
}

/// Runs `body` against a fresh store of `kind` and always tears it down.
func withZoneStore<T>(_ kind: ZoneStoreKind, _ body: (any ZoneStore) async throws -> T) async throws -> T {
    switch kind {
    case .inMemory:
        return try await body(InMemoryZoneStore())
    case .folder:
        let directory = TemporaryDirectory("zones")
        defer { withExtendedLifetime(directory) {} }
        return try await body(try FolderZoneStore(root: directory.path, writer: "laptop", pollInterval: .milliseconds(20)))
    case .httpLoopback:
        let server = try await LoopbackZoneServer.start()
        do {
            let result = try await body(server.store())
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
}

/// Expects `body` to throw a `ZoneError` with `code`; returns it.
@discardableResult
func expectZoneError<T>(_ code: ZoneError.Code, sourceLocation: SourceLocation = #_sourceLocation,
                        _ body: () async throws -> T) async -> ZoneError? {
    do {
        _ = try await body()
        Issue.record("expected ZoneError(\(code)), got success", sourceLocation: sourceLocation)
    } catch let error as ZoneError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected ZoneError(\(code)), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Every record of the zone's feed from `since`, page by page, with the final token.
func drainChanges(_ store: any ZoneStore, _ zoneId: String, since: ZoneChangeToken? = nil, limit: Int = 200)
    async throws -> (records: [ZoneRecord], token: ZoneChangeToken, pages: Int) {
    var records: [ZoneRecord] = []
    var token = since
    var pages = 0
    while true {
        let page = try await store.fetchChanges(zoneId: zoneId, since: token, limit: limit)
        pages += 1
        records += page.records
        token = page.changeToken
        if !page.moreComing { return (records, page.changeToken, pages) }
        #expect(!page.records.isEmpty, "a page with moreComing must carry records")
        if pages > 100_000 { throw ZoneError(.invalidResponse, "feed does not end") }
    }
}

/// The newest state per record name of a feed (the feed may repeat a record).
func latest(_ records: [ZoneRecord]) -> [String: ZoneRecord] {
    var result: [String: ZoneRecord] = [:]
    for record in records { result[record.recordName] = record }
    return result
}
