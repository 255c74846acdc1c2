import AsyncHTTPClient
import Foundation
import ImprintDelivery
import ImprintServerTestSupport
import ImprintTestSupport
import ImprintZoneService
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Speaks the zone API over real HTTP as one caller; errors come back as `DeliveryServiceError`.
struct ZoneTestClient: Sendable {
    let baseURL: String
    let signer: ServiceAuthSigner
    var did: String { signer.did }

    func call(
        _ method: ZoneMethod, query: [(String, String)] = [], json: Data? = nil, raw: Data? = nil,
        headers: [(String, String)] = [], authenticated: Bool = true
    ) async throws -> RawResponse {
        var all = headers
        if authenticated {
            all.append(("Authorization", "Bearer \(try signer.token(audience: RunningServer.serviceDID, method: method.nsid))"))
        }
        if json != nil { all.append(("Content-Type", "application/json")) }
        if raw != nil { all.append(("Content-Type", "application/octet-stream")) }
        let text = query.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
        return try await RawHTTP.send(
            baseURL: baseURL, method.isProcedure ? .POST : .GET, method.path + (text.isEmpty ? "" : "?" + text), headers: all, body: json ?? raw)
    }

    func decode<Output: Decodable>(_ type: Output.Type, _ response: RawResponse) throws -> Output {
        guard response.status == 200 || response.status == 206 else {
            let body = response.errorBody ?? XRPCErrorBody(error: "Unparsed", message: response.text)
            throw DeliveryServiceError(status: response.status, body: body)
        }
        return try WireJSON.decoder().decode(Output.self, from: response.body)
    }

    func procedure<Input: Encodable, Output: Decodable>(_ method: ZoneMethod, _ input: Input, as type: Output.Type, authenticated: Bool = true) async throws -> Output {
        try decode(type, try await call(method, json: try WireJSON.encoder().encode(input), authenticated: authenticated))
    }

    @discardableResult
    func createZone(_ zoneId: String, convoId: String? = nil) async throws -> ZoneView {
        try await procedure(.createZone, CreateZoneInput(zoneId: zoneId, convoId: convoId), as: CreateZoneOutput.self).zone
    }

    func deleteZone(_ zoneId: String) async throws {
        _ = try await procedure(.deleteZone, ZoneRefInput(zoneId: zoneId), as: EmptyOutput.self)
    }

    func upload(_ bytes: Data, zoneId: String, recordType: String? = nil) async throws -> ZoneAssetRef {
        var query = [("zoneId", zoneId)]
        if let recordType { query.append(("recordType", recordType)) }
        return try decode(ZoneAssetRef.self, try await call(.uploadAsset, query: query, raw: bytes))
    }

    @discardableResult
    func save(_ zoneId: String, _ records: [RecordToSave]) async throws -> [ZoneRecord] {
        try await procedure(.saveRecords, SaveRecordsInput(zoneId: zoneId, records: records), as: SaveRecordsOutput.self).records
    }

    func fetch(_ zoneId: String, since: String? = nil, limit: Int? = nil) async throws -> FetchChangesOutput {
        var query = [("zoneId", zoneId)]
        if let since { query.append(("since", since)) }
        if let limit { query.append(("limit", String(limit))) }
        return try decode(FetchChangesOutput.self, try await call(.fetchChanges, query: query))
    }

    /// Every change from `since` on, following `moreComing`.
    func fetchAll(_ zoneId: String, since: String? = nil, limit: Int = 200) async throws -> (records: [ZoneRecord], token: String) {
        var records: [ZoneRecord] = []
        var token = since
        while true {
            let page = try await fetch(zoneId, since: token, limit: limit)
            records += page.records
            token = page.changeToken
            if !page.moreComing { return (records, page.changeToken) }
        }
    }

    func record(_ zoneId: String, _ name: String) async throws -> ZoneRecord {
        try decode(GetRecordOutput.self, try await call(.getRecord, query: [("zoneId", zoneId), ("recordName", name)])).record
    }

    func asset(_ zoneId: String, _ hash: String, range: String? = nil) async throws -> RawResponse {
        try await call(.getAsset, query: [("zoneId", zoneId), ("hash", hash)], headers: range.map { [("Range", $0)] } ?? [])
    }

    func delete(_ zoneId: String, _ names: [String]) async throws -> [String] {
        try await procedure(.deleteRecords, DeleteRecordsInput(zoneId: zoneId, recordNames: names), as: DeleteRecordsOutput.self).deleted
    }

    func usage() async throws -> GetUsageOutput {
        try decode(GetUsageOutput.self, try await call(.getUsage))
    }

    /// `changed` events of `subscribeZone`, as they arrive.
    func subscribe(_ zoneId: String, lastEventID: String? = nil) -> AsyncThrowingStream<ServerSentEvent, Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var request = HTTPClientRequest(
                        url: baseURL + ZoneMethod.subscribeZone.path + "?zoneId=" + (zoneId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
                    request.headers.add(name: "Authorization", value: "Bearer \(try signer.token(audience: RunningServer.serviceDID, method: ZoneMethod.subscribeZone.nsid))")
                    if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
                    let response = try await TestHTTP.client.execute(request, deadline: .distantFuture)
                    guard response.status == .ok else {
                        let bytes = try await response.body.collect(upTo: 1 << 20)
                        let body = try JSONDecoder().decode(XRPCErrorBody.self, from: Data(buffer: bytes))
                        throw DeliveryServiceError(status: Int(response.status.code), body: body)
                    }
                    var parser = ServerSentEventParser()
                    for try await chunk in response.body {
                        for event in parser.feed(chunk.readableBytesView) { continuation.yield(event) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// Deterministic test bytes: `count` bytes from SplitMix64 seeded with `seed`.
func testBytes(_ count: Int, seed: UInt64) -> Data {
    var generator = SplitMix64(seed: seed)
    var data = Data(capacity: count + 8)
    while data.count < count {
        withUnsafeBytes(of: generator.next()) { data.append(contentsOf: $0) }
    }
    return data.prefix(count)
}
