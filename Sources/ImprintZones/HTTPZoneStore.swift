import AsyncHTTPClient
import Foundation
import ImprintDelivery
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// The client of the zone service (`imprint-server`), one call per ``ZoneStore`` operation.
///
/// XRPC at `/xrpc/app.imprint.zone.<method>`: JSON bodies, base64 inline assets, raw bytes
/// for `uploadAsset`/`getAsset`, server-sent events for `subscribeZone`; every request carries
/// a fresh did:key service-auth JWT whose `lxm` is the method's NSID (built by the same
/// `XRPCRequestBuilder` as `DeliveryClient`). The service's error names map onto
/// ``ZoneError`` codes (`ChangeTokenExpired` → ``ZoneError/Code/changeTokenExpired``, …);
/// answers are size-capped and checked (records against the zone API's rules, asset bytes against
/// their hash), so a broken or hostile server yields a typed error, never a bad value.
///
/// ```swift
/// let store = HTTPZoneStore(baseURL: "http://127.0.0.1:8080", serviceDID: serviceDID, signer: signer)
/// _ = try await store.createZone("doc_\(convoId)", convoId: convoId)
/// ```
public struct HTTPZoneStore: ZoneStore {
    public let baseURL: String
    public let serviceDID: String
    public let signer: ServiceAuthSigner
    public let httpClient: HTTPClient
    public var timeout: TimeAmount = .seconds(60)
    /// An inbox write capability sent with every request (header `Imprint-Inbox-Capability`),
    /// for appending to the inbox of someone who handed it out: the inbox lives on a server
    /// where the two share no convo (`putInboxCapability`). nil by default.
    public var inboxCapability: String?
    /// The participant limit this deployment declares for a shared zone (see
    /// ``ZoneStore/participantLimit``); nil (no limit) by default.
    public var participantLimit: Int?
    /// When set, requests to a server that stopped answering fail at once for a while
    /// instead of each waiting for ``timeout`` (see ``EndpointCircuit``). nil by default.
    public var circuit: EndpointCircuit?
    /// How many times a request refused with 429 `RateLimited` is sent again, each after the
    /// wait the answer's `Retry-After` asks for (`RateLimitBackoff`), before the error is thrown.
    public var rateLimitRetries = 3

    static let inboxCapabilityHeader = "Imprint-Inbox-Capability"
    /// JSON answers above this are refused (1000 records of ~1 KiB with room to spare).
    static let maximumJSONResponseBytes = 16 << 20
    /// Bytes an event stream may send without completing an event.
    static let maximumPendingEventBytes = 1 << 20

    /// - Parameters:
    ///   - baseURL: e.g. `http://127.0.0.1:8080`.
    ///   - serviceDID: the `aud` the service expects.
    ///   - signer: the caller's did:key identity.
    ///   - httpClient: the client requests go through (`HTTPClient.imprint` by default).
    public init(baseURL: String, serviceDID: String, signer: ServiceAuthSigner, httpClient: HTTPClient = .imprint) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.serviceDID = serviceDID
        self.signer = signer
        self.httpClient = httpClient
    }

    private var requests: XRPCRequestBuilder { XRPCRequestBuilder(baseURL: baseURL, serviceDID: serviceDID, signer: signer) }

    /// The same store presenting `capability` (see ``inboxCapability``).
    public func presenting(inboxCapability capability: String?) -> HTTPZoneStore {
        var store = self
        store.inboxCapability = capability
        return store
    }

    // MARK: Inbox write capabilities (v1.2)

    /// Registers (`keyHash`, the SHA-256 hex of the capability's UTF-8 bytes) or withdraws
    /// (nil) write capability `name` of this identity's inbox `zoneId`. Whoever presents the
    /// capability may then append to the inbox, though it shares no convo with the owner on
    /// this server; registering a name again replaces (revokes) its old value.
    ///
    /// ```swift
    /// let capability = "…32 random bytes, base64url…"
    /// let keyHash = SHA256.hash(data: Data(capability.utf8)).map { String(format: "%02x", $0) }.joined()
    /// try await store.putInboxCapability(zoneId: "inbox_\(did)", name: convoId, keyHash: keyHash)
    /// // a sender on another server:
    /// _ = try await senderStore.presenting(inboxCapability: capability).saveRecords(zoneId: "inbox_\(did)", drafts)
    /// ```
    public func putInboxCapability(zoneId: String, name: String, keyHash: String?) async throws {
        try ZoneRules.checkZoneId(zoneId)
        let _: ZoneWire.EmptyOutput = try await procedure(.putInboxCapability,
                                                          ZoneWire.PutInboxCapabilityInput(zoneId: zoneId, name: name, keyHash: keyHash))
    }

    // MARK: ZoneStore

    public func createZone(_ zoneId: String, convoId: String?) async throws -> ZoneInfo {
        try ZoneRules.checkZoneId(zoneId)
        let output: ZoneWire.CreateZoneOutput = try await procedure(.createZone, ZoneWire.CreateZoneInput(zoneId: zoneId, convoId: convoId))
        guard output.zone.zoneId == zoneId else { throw ZoneError(.invalidResponse, "createZone answered for another zone") }
        return ZoneInfo(zoneId: output.zone.zoneId, owner: output.zone.owner, kind: output.zone.kind, createdAt: output.zone.createdAt)
    }

    public func deleteZone(_ zoneId: String) async throws {
        try ZoneRules.checkZoneId(zoneId)
        let _: ZoneWire.EmptyOutput = try await procedure(.deleteZone, ZoneWire.ZoneRefInput(zoneId: zoneId))
    }

    /// The body goes out in pieces that are hashed as they are handed to the connection
    /// (`HashingUploadBody`), so the client's SHA-256 overlaps the transfer instead of
    /// preceding it; the service's answer is still checked against that hash and size.
    public func uploadAsset(zoneId: String, bytes: [UInt8]) async throws -> ZoneAsset {
        try ZoneRules.checkZoneId(zoneId)
        try ZoneRules.checkAssetBytes(bytes.count)
        var body = HashingUploadBody(bytes)
        let answer: ZoneWire.AssetOutput = try decode(try await execute(limit: Self.maximumJSONResponseBytes) {
            var request = try requests.request(path: ZoneMethod.uploadAsset.path, query: [("zoneId", zoneId)], method: .POST,
                                               lxm: ZoneMethod.uploadAsset.nsid)
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            if let inboxCapability { request.headers.add(name: Self.inboxCapabilityHeader, value: inboxCapability) }
            body = HashingUploadBody(bytes)  // each attempt hashes what it sends
            request.body = .stream(body, length: .known(Int64(bytes.count)))
            return request
        })
        // nil unless every byte went out: a service that answers 200 early is refused too.
        guard let sent = body.sentAsset(), answer == sent else {
            let sent = body.sentAsset()?.hash ?? "(body not sent whole)"
            throw ZoneError(.invalidResponse, "uploadAsset answered \(answer.hash.prefix(64)) (\(answer.size) bytes), sent \(sent)")
        }
        return answer
    }

    public func fetchAsset(zoneId: String, hash: String) async throws -> [UInt8] {
        try ZoneRules.checkZoneId(zoneId)
        guard SHA256Hex.isValid(hash) else { throw ZoneError(.invalidArgument, "asset hash is not lowercase hex SHA-256") }
        let body = try await execute(limit: ZoneLimits.maximumAssetBytes) {
            try requests.request(path: ZoneMethod.getAsset.path, query: [("zoneId", zoneId), ("hash", hash)], method: .GET,
                                 lxm: ZoneMethod.getAsset.nsid)
        }
        let bytes = Array(body.readableBytesView)
        guard SHA256Hex.digest(bytes) == hash else { throw ZoneError(.assetCorrupt, "getAsset bytes do not hash to \(hash)") }
        return bytes
    }

    public func saveRecords(zoneId: String, _ drafts: [ZoneRecordDraft]) async throws -> [ZoneRecord] {
        try ZoneRules.checkZoneId(zoneId)
        try ZoneRules.checkBatch(drafts)
        let output: ZoneWire.RecordsOutput = try await procedure(
            .saveRecords, ZoneWire.SaveRecordsInput(zoneId: zoneId, records: drafts.map(ZoneWire.RecordInput.init)))
        let records = try output.records.map { try $0.record() }
        guard records.map(\.recordName) == drafts.map(\.recordName),
              zip(records, drafts).allSatisfy({ $0.asset.hash == $1.asset.reference.hash }) else {
            throw ZoneError(.invalidResponse, "saveRecords answered other records than it was sent")
        }
        return records
    }

    /// As few requests as the limits allow (v1.1 `saveToInboxes`: at most
    /// `ZoneLimits.maximumBatchRecords` records and about 1.5 MiB each), for the fan-out of
    /// mailbox delivery, sent concurrently (each is one transaction on the server, so a
    /// fan-out to 1,000 inboxes takes about as long as its slowest request, not the sum).
    /// Records that several inboxes share (one message's copies) travel once per request
    /// (v1.3), each inbox naming only its zone; a server older than v1.3 refuses that shape
    /// (400), and gets the copies inbox by inbox (v1.1) from then on. Results come in the
    /// order of `saves`; a request that fails throws (the others may have saved: every
    /// save is idempotent by record name, so the caller's retry repeats nothing).
    public func saveToInboxes(_ saves: [InboxSave]) async throws -> [InboxSaveResult] {
        var parts: [[InboxSave]] = []
        var part: [InboxSave] = [], count = 0, bytes = 0
        let legacy = LegacyFanOut.servers.contains(baseURL)
        for save in saves {
            try ZoneRules.checkZoneId(save.zoneId)
            try ZoneRules.checkBatch(save.records)
            // Shared records cost their bytes once per request, an inbox naming them ~256 bytes.
            let shared = !legacy && part.first?.records == save.records
            let size = shared ? 256 : save.records.reduce(0) { total, record in
                if case .inline(let bytes) = record.asset { return total + bytes.count * 4 / 3 + 1024 }
                return total + 1024
            }
            if !part.isEmpty, count + save.records.count > ZoneLimits.maximumBatchRecords || bytes + size > ZoneLimits.saveBodyBudget {
                parts.append(part)
                (part, count, bytes) = ([], 0, 0)
            }
            part.append(save)
            count += save.records.count
            bytes += size
        }
        if !part.isEmpty { parts.append(part) }
        if parts.count <= 1 {
            guard let only = parts.first else { return [] }
            return try await saveInboxPart(only)
        }
        return try await withThrowingTaskGroup(of: (Int, [InboxSaveResult]).self) { group in
            for (index, part) in parts.enumerated() {
                group.addTask { (index, try await self.saveInboxPart(part)) }
            }
            var answered = [[InboxSaveResult]](repeating: [], count: parts.count)
            for try await (index, results) in group { answered[index] = results }
            return answered.flatMap { $0 }
        }
    }

    private func saveInboxPart(_ part: [InboxSave]) async throws -> [InboxSaveResult] {
        let shared = part[0].records
        let output: ZoneWire.SaveToInboxesOutput
        if !LegacyFanOut.servers.contains(baseURL), part.dropFirst().contains(where: { $0.records == shared }) {
            do {
                output = try await procedure(.saveToInboxes, ZoneWire.SaveToInboxesInput(
                    inboxes: part.map { .init(zoneId: $0.zoneId, records: $0.records == shared ? nil : $0.records.map(ZoneWire.RecordInput.init),
                                              capability: $0.capability) },
                    records: shared.map(ZoneWire.RecordInput.init)))
            } catch let error as ZoneError where error.httpStatus == 400 {
                // An older server, or a request that is bad in either shape: the second try tells.
                LegacyFanOut.servers.insert(baseURL)
                do {
                    return try await saveInboxPart(part)
                } catch let again as ZoneError where again.httpStatus == 400 {
                    LegacyFanOut.servers.remove(baseURL)
                    throw again
                }
            }
        } else {
            output = try await procedure(.saveToInboxes, ZoneWire.SaveToInboxesInput(
                inboxes: part.map { .init(zoneId: $0.zoneId, records: $0.records.map(ZoneWire.RecordInput.init), capability: $0.capability) }))
        }
        guard output.inboxes.map(\.zoneId) == part.map(\.zoneId) else {
            throw ZoneError(.invalidResponse, "saveToInboxes answered for other inboxes than it was sent")
        }
        return try output.inboxes.map { inbox in
            if let name = inbox.error {
                // One inbox's error inside a 200 answer: no HTTP status of its own.
                return InboxSaveResult(zoneId: inbox.zoneId, error: Self.error(name: name, message: inbox.message ?? "", status: nil))
            }
            return InboxSaveResult(zoneId: inbox.zoneId, records: try (inbox.records ?? []).map { try $0.record() })
        }
    }

    public func fetchChanges(zoneId: String, since: ZoneChangeToken?, limit: Int) async throws -> ZoneChangeBatch {
        try ZoneRules.checkZoneId(zoneId)
        try ZoneRules.checkLimit(limit)
        var query = [("zoneId", zoneId), ("limit", String(limit))]
        if let since { query.append(("since", since.rawValue)) }
        let output: ZoneWire.FetchChangesOutput = try await self.query(.fetchChanges, query)
        guard output.records.count <= ZoneLimits.fetchLimitRange.upperBound,
              !output.changeToken.isEmpty, output.changeToken.utf8.count <= ZoneWire.maximumChangeTokenBytes else {
            throw ZoneError(.invalidResponse, "fetchChanges answer out of bounds")
        }
        return ZoneChangeBatch(records: try output.records.map { try $0.record() },
                               changeToken: ZoneChangeToken(rawValue: output.changeToken), moreComing: output.moreComing)
    }

    public func record(zoneId: String, named recordName: String) async throws -> ZoneRecord {
        try ZoneRules.checkZoneId(zoneId)
        try ZoneRules.checkRecordName(recordName)
        let output: ZoneWire.GetRecordOutput = try await query(.getRecord, [("zoneId", zoneId), ("recordName", recordName)])
        let record = try output.record.record()
        guard record.recordName == recordName else { throw ZoneError(.invalidResponse, "getRecord answered another record") }
        return record
    }

    public func deleteRecords(zoneId: String, names: [String]) async throws -> [String] {
        try ZoneRules.checkZoneId(zoneId)
        try ZoneRules.checkNames(names)
        let output: ZoneWire.DeleteRecordsOutput = try await procedure(.deleteRecords, ZoneWire.DeleteRecordsInput(zoneId: zoneId, recordNames: names))
        let asked = Set(names)
        guard output.deleted.allSatisfy(asked.contains) else { throw ZoneError(.invalidResponse, "deleteRecords answered names it was not sent") }
        return output.deleted
    }

    /// Opens `subscribeZone` and returns once the service accepted it (the stream is live).
    /// The sequence ends when the service closes the stream; subscribe again to go on.
    public func subscribe(zoneId: String) async throws -> AsyncThrowingStream<ZoneChangeNotification, any Error> {
        try ZoneRules.checkZoneId(zoneId)
        var request = try requests.request(path: ZoneMethod.subscribeZone.path, query: [("zoneId", zoneId)], method: .GET,
                                           lxm: ZoneMethod.subscribeZone.nsid)
        request.headers.add(name: "Accept", value: "text/event-stream")
        let response: HTTPClientResponse
        do {
            response = try await httpClient.execute(request, deadline: .distantFuture)
        } catch {
            throw ZoneError(.transport, "\(error)")
        }
        guard response.status == .ok else {
            let body = (try? await response.body.collect(upTo: XRPCErrorBody.maximumBytes)) ?? ByteBuffer()
            throw Self.error(status: Int(response.status.code), body: body)
        }
        let (stream, continuation) = AsyncThrowingStream<ZoneChangeNotification, any Error>.makeStream()
        let task = Task {
            do {
                var parser = ServerSentEventParser()
                var pendingBytes = 0
                for try await chunk in response.body {
                    let events = parser.feed(chunk.readableBytesView)
                    pendingBytes = events.isEmpty ? pendingBytes + chunk.readableBytes : 0
                    guard pendingBytes <= Self.maximumPendingEventBytes else {
                        throw ZoneError(.invalidResponse, "event stream sent over \(Self.maximumPendingEventBytes) bytes without an event")
                    }
                    for event in events where event.event == "changed" {
                        guard let changed = try? WireJSON.decoder().decode(ZoneWire.ChangedEvent.self, from: Data(event.data.utf8)),
                              changed.zoneId == zoneId, changed.changeToken.utf8.count <= ZoneWire.maximumChangeTokenBytes
                        else { throw ZoneError(.invalidResponse, "undecodable changed event") }
                        continuation.yield(ZoneChangeNotification(zoneId: zoneId, changeToken: ZoneChangeToken(rawValue: changed.changeToken)))
                    }
                }
                continuation.finish()
            } catch let error as ZoneError {
                continuation.finish(throwing: error)
            } catch {
                continuation.finish(throwing: Task.isCancelled ? CancellationError() : ZoneError(.transport, "\(error)"))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The caller's zones and bytes against the service's quota (not part of ``ZoneStore``:
    /// only a service has quotas).
    /// `compactZone`: the zone service compacts `zoneId` now (it also does so by itself
    /// periodically).
    public func compact(zoneId: String) async throws -> ZoneCompaction? {
        try ZoneRules.checkZoneId(zoneId)
        let output: ZoneWire.CompactZoneOutput = try await procedure(.compactZone, ZoneWire.ZoneRefInput(zoneId: zoneId))
        guard output.deletedRecords >= 0, output.freedBytes >= 0, output.forgottenMessages >= 0, (output.compactedBefore ?? 1) >= 1 else {
            throw ZoneError(.invalidResponse, "compactZone answer out of bounds")
        }
        return ZoneCompaction(compactedBefore: output.compactedBefore, deletedRecords: output.deletedRecords,
                              freedBytes: output.freedBytes, forgottenMessages: output.forgottenMessages)
    }

    public func usage() async throws -> ZoneUsage {
        let output: ZoneWire.UsageOutput = try await query(.getUsage, [])
        guard output.quotaBytes >= 0, output.zones.count <= 100_000,
              output.zones.allSatisfy({ $0.records >= 0 && $0.bytes >= 0 && $0.zoneId.utf8.count <= 1024 }) else {
            throw ZoneError(.invalidResponse, "getUsage answer out of bounds")
        }
        return ZoneUsage(zones: output.zones.map { ZoneUsage.Zone(zoneId: $0.zoneId, records: $0.records, bytes: $0.bytes) },
                         quotaBytes: output.quotaBytes)
    }

    // MARK: Transport

    private func procedure<Input: Encodable, Output: Decodable>(_ method: ZoneMethod, _ input: Input) async throws -> Output {
        let body = ByteBuffer(data: try WireJSON.encoder().encode(input))
        return try decode(try await execute(limit: Self.maximumJSONResponseBytes) {
            var request = try requests.request(path: method.path, query: [], method: .POST, lxm: method.nsid)
            request.headers.add(name: "Content-Type", value: "application/json")
            if let inboxCapability { request.headers.add(name: Self.inboxCapabilityHeader, value: inboxCapability) }
            request.body = .bytes(body)
            return request
        })
    }

    private func query<Output: Decodable>(_ method: ZoneMethod, _ query: [(String, String)]) async throws -> Output {
        return try decode(try await execute(limit: Self.maximumJSONResponseBytes) {
            try requests.request(path: method.path, query: query, method: .GET, lxm: method.nsid)
        })
    }

    /// The body of a 200 answer of at most `limit` bytes to the request `makeRequest` builds
    /// (built again for each attempt after a 429 `RateLimited`: `RateLimitBackoff`); any other
    /// answer as a ``ZoneError``.
    private func execute(limit: Int, _ makeRequest: () throws -> HTTPClientRequest) async throws -> ByteBuffer {
        try circuit?.check(baseURL)
        let response: HTTPClientResponse
        do {
            response = try await RateLimitBackoff.execute(httpClient, timeout: timeout, retries: rateLimitRetries, makeRequest)
        } catch let error as CancellationError {
            throw error
        } catch {
            if EndpointCircuit.isTimeout(error) { circuit?.failed() }
            throw ZoneError(.transport, "\(error)")
        }
        circuit?.answered()
        guard response.status == .ok else {
            let body = (try? await response.body.collect(upTo: XRPCErrorBody.maximumBytes)) ?? ByteBuffer()
            throw Self.error(status: Int(response.status.code), body: body)
        }
        do {
            return try await response.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw ZoneError(.invalidResponse, "answer over \(limit) bytes", httpStatus: 200)
        } catch {
            throw ZoneError(.transport, "\(error)")
        }
    }

    private func decode<Output: Decodable>(_ body: ByteBuffer) throws -> Output {
        do {
            return try WireJSON.decoder().decode(Output.self, from: body)
        } catch {
            throw ZoneError(.invalidResponse, "undecodable answer: \(String(describing: error).prefix(200))", httpStatus: 200)
        }
    }

    /// The ``ZoneError`` for an error answer: by the contract's error name, else by status.
    static func error(status: Int, body: ByteBuffer) -> ZoneError {
        guard let decoded = try? JSONDecoder().decode(XRPCErrorBody.self, from: body) else {
            return ZoneError(.server, "HTTP \(status) without an error body", httpStatus: status)
        }
        return error(name: decoded.error, message: decoded.message, status: status)
    }

    /// The error a server named `name` (an XRPC error body's `error`), answered with HTTP
    /// `status` (nil: one inbox's error inside a fan-out's answer; a name this client has no
    /// code for then reads as `.forbidden`, what a server refuses an inbox for).
    static func error(name: String, message: String, status: Int?) -> ZoneError {
        let message = String(message.prefix(200))
        let code: ZoneError.Code
        switch name {
        case "ZoneNotFound": code = .zoneNotFound
        case "RecordNotFound": code = .recordNotFound
        case "AssetNotFound": code = .assetNotFound
        case "RecordExists": code = .recordExists
        case "ZoneExists": code = .zoneExists
        case "ChangeTokenExpired": code = .changeTokenExpired
        case "PayloadTooLarge": code = .payloadTooLarge
        case "QuotaExceeded": code = .quotaExceeded
        case "Gone": code = .gone
        case "InvalidRequest": code = .invalidArgument
        default:
            switch status ?? 403 {
            case 400: code = .invalidArgument
            case 401, 403: code = .forbidden
            case 413: code = .payloadTooLarge
            default: code = .server
            }
        }
        return ZoneError(code, "\(name.prefix(64)): \(message)", httpStatus: status)
    }
}

/// The zone servers that refused v1.3's shared-records `saveToInboxes` (400: a server before
/// v1.3, whose inboxes each need their records), remembered for this process.
enum LegacyFanOut {
    static let servers = ServerSet()

    final class ServerSet: @unchecked Sendable {
        private let lock = NSLock()
        private var urls: Set<String> = []

        func contains(_ url: String) -> Bool { lock.withLock { urls.contains(url) } }
        func insert(_ url: String) { _ = lock.withLock { urls.insert(url) } }
        func remove(_ url: String) { _ = lock.withLock { urls.remove(url) } }
    }
}
