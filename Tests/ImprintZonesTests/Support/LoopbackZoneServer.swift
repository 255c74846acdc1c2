import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging
import ImprintDelivery
@testable import ImprintZones
import NIOCore

/// A small zone service on 127.0.0.1 for the HTTP client's tests: every method of the zone API
/// contract over real HTTP, backed by an `InMemoryZoneStore`, checking each request's did:key
/// service-auth JWT (signature, `aud`, and `lxm` = the method's NSID) the way the real service
/// does. Not the real service (that is `ImprintZoneService`); it lets `HTTPZoneStore` run the
/// conformance suite, lets tests script hostile answers per method, and answers
/// `saveToInboxes` as a server of zone API v1.1 did (the older wire the client falls back to).
final class LoopbackZoneServer: Sendable {
    static let serviceDID = "did:web:zones.test"

    let baseURL: String
    let backing: InMemoryZoneStore
    let script: Script
    private let task: Task<Void, Error>

    /// Canned answers that replace the real one for a method (hostile-bytes tests), and what
    /// the server saw.
    actor Script {
        struct Answer: Sendable {
            var status: HTTPResponse.Status
            var contentType: String
            var body: [UInt8]
        }
        var answers: [String: Answer] = [:]
        var seen: [(method: String, query: String, body: [UInt8], lxm: String)] = []

        func answer(_ method: String, status: HTTPResponse.Status = .ok, contentType: String = "application/json", body: [UInt8]) {
            answers[method] = Answer(status: status, contentType: contentType, body: body)
        }
        func answer(for method: String) -> Answer? { answers[method] }
        func record(_ method: String, _ query: String, _ body: [UInt8], _ lxm: String) { seen.append((method, query, body, lxm)) }
        func requests() -> [(method: String, query: String, body: [UInt8], lxm: String)] { seen }
    }

    private init(baseURL: String, backing: InMemoryZoneStore, script: Script, task: Task<Void, Error>) {
        self.baseURL = baseURL
        self.backing = backing
        self.script = script
        self.task = task
    }

    private static let quietLogger: Logger = {
        var logger = Logger(label: "loopback-zone-server")
        logger.logLevel = .critical
        return logger
    }()

    static func start() async throws -> LoopbackZoneServer {
        let backing = InMemoryZoneStore()
        let script = Script()
        let router = Router()
        for method in ZoneMethod.allCases {
            let handler: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
                try await respond(method, request, backing, script)
            }
            if method.isProcedure { router.post(RouterPath(method.path), use: handler) } else { router.get(RouterPath(method.path), use: handler) }
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            }, logger: quietLogger)
        let task = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw ZoneError(.transport, "loopback server did not start") }
        return LoopbackZoneServer(baseURL: "http://127.0.0.1:\(port)", backing: backing, script: script, task: task)
    }

    /// A client of this server. Its requests wait up to 300 s: the tests check answers, not
    /// speed, and in the first minutes of the full run this in-process server's handlers wait
    /// for Swift's two cooperative threads, which other suites' blocking work holds (a fan-out
    /// test that takes 0.2 s alone ran past the 60 s default once, and took 115 s in another run).
    func store(_ signer: ServiceAuthSigner = ServiceAuthSigner()) -> HTTPZoneStore {
        var store = HTTPZoneStore(baseURL: baseURL, serviceDID: Self.serviceDID, signer: signer)
        store.timeout = .seconds(300)
        return store
    }

    /// Cancels the server (open event streams included); does not wait for it to wind down.
    func stop() async {
        task.cancel()
    }

    // MARK: Handlers

    private static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: try WireJSON.encoder().encode(value))))
    }

    private static func failure(_ error: ZoneError) throws -> Response {
        let (status, name): (HTTPResponse.Status, String) = switch error.code {
        case .zoneNotFound: (.notFound, "ZoneNotFound")
        case .recordNotFound: (.notFound, "RecordNotFound")
        case .assetNotFound: (.notFound, "AssetNotFound")
        case .recordExists: (.conflict, "RecordExists")
        case .zoneExists: (.conflict, "ZoneExists")
        case .changeTokenExpired: (.gone, "ChangeTokenExpired")
        case .payloadTooLarge: (.contentTooLarge, "PayloadTooLarge")
        default: (.badRequest, "InvalidRequest")
        }
        return try json(XRPCErrorBody(error: name, message: error.context), status: status)
    }

    /// A record as the request carried it, ready for the backing store (no asset at all
    /// becomes one the store does not hold).
    private static func draft(_ record: ZoneWire.RecordInput) -> ZoneRecordDraft {
        ZoneRecordDraft(recordName: record.recordName, recordType: record.recordType, fields: record.fields,
                        asset: record.assetData.map { .inline(Array($0)) } ?? .uploaded(record.asset ?? ZoneAsset(hash: "", size: 0)))
    }

    private static func respond(_ method: ZoneMethod, _ request: Request, _ store: InMemoryZoneStore, _ script: Script) async throws -> Response {
        guard let lxm = verifiedMethod(request), lxm == method.nsid else {
            return try json(XRPCErrorBody(error: "AuthRequired", message: "bad service-auth token"), status: .unauthorized)
        }
        let body = Array((try await request.body.collect(upTo: 64 << 20)).readableBytesView)
        await script.record(method.rawValue, request.uri.query ?? "", body, lxm)
        if let canned = await script.answer(for: method.rawValue) {
            var headers = HTTPFields()
            headers[.contentType] = canned.contentType
            return Response(status: canned.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: canned.body)))
        }
        let query = request.uri.queryParameters
        let decoder = WireJSON.decoder()
        do {
            switch method {
            case .createZone:
                let input = try decoder.decode(ZoneWire.CreateZoneInput.self, from: Data(body))
                let info = try await store.createZone(input.zoneId, convoId: input.convoId)
                return try json(ZoneWire.CreateZoneOutput(zone: .init(zoneId: info.zoneId, owner: verifiedIssuer(request), kind: info.kind, createdAt: info.createdAt)))
            case .deleteZone:
                try await store.deleteZone(try decoder.decode(ZoneWire.ZoneRefInput.self, from: Data(body)).zoneId)
                return try json(ZoneWire.EmptyOutput())
            case .uploadAsset:
                return try json(try await store.uploadAsset(zoneId: String(query["zoneId"] ?? ""), bytes: body))
            case .saveRecords:
                let input = try decoder.decode(ZoneWire.SaveRecordsInput.self, from: Data(body))
                let drafts = input.records.map(draft)
                let saved = try await store.saveRecords(zoneId: input.zoneId, drafts)
                return try json(ZoneWire.RecordsOutput(records: saved.map(ZoneWire.RecordView.init)))
            case .fetchChanges:
                let since = query["since"].map { ZoneChangeToken(rawValue: String($0)) }
                let batch = try await store.fetchChanges(zoneId: String(query["zoneId"] ?? ""), since: since, limit: Int(query["limit"] ?? "200") ?? 0)
                return try json(ZoneWire.FetchChangesOutput(records: batch.records.map(ZoneWire.RecordView.init),
                                                            changeToken: batch.changeToken.rawValue, moreComing: batch.moreComing))
            case .getRecord:
                let record = try await store.record(zoneId: String(query["zoneId"] ?? ""), named: String(query["recordName"] ?? ""))
                return try json(ZoneWire.GetRecordOutput(record: .init(record)))
            case .getAsset:
                let bytes = try await store.fetchAsset(zoneId: String(query["zoneId"] ?? ""), hash: String(query["hash"] ?? ""))
                var headers = HTTPFields()
                headers[.contentType] = "application/octet-stream"
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            case .deleteRecords:
                let input = try decoder.decode(ZoneWire.DeleteRecordsInput.self, from: Data(body))
                return try json(ZoneWire.DeleteRecordsOutput(deleted: try await store.deleteRecords(zoneId: input.zoneId, names: input.recordNames)))
            case .subscribeZone:
                let zoneId = String(query["zoneId"] ?? "")
                let notifications = try await store.subscribe(zoneId: zoneId)
                var headers = HTTPFields()
                headers[.contentType] = "text/event-stream"
                return Response(status: .ok, headers: headers, body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: ": subscribed\n\n"))
                    var id = 0
                    for try await notification in notifications {
                        id += 1
                        let data = try WireJSON.encoder().encode(ZoneWire.ChangedEvent(zoneId: zoneId, changeToken: notification.changeToken?.rawValue ?? ""))
                        try await writer.write(ByteBuffer(string: "id: \(id)\nevent: changed\ndata: \(String(decoding: data, as: UTF8.self))\n\n"))
                    }
                    try await writer.finish(nil)
                })
            case .saveToInboxes:
                // As a server before v1.3 answers: records once beside the inboxes is a key it
                // does not know (400); each inbox's own records are saved like `saveRecords`.
                let input = try decoder.decode(ZoneWire.SaveToInboxesInput.self, from: Data(body))
                guard input.records == nil, !input.inboxes.contains(where: { $0.records == nil }) else {
                    return try json(XRPCErrorBody(error: "InvalidRequest", message: "unknown key records"), status: .badRequest)
                }
                var answers: [ZoneWire.SaveToInboxesOutput.Inbox] = []
                for inbox in input.inboxes {
                    let drafts = (inbox.records ?? []).map(draft)
                    do {
                        let saved = try await store.saveRecords(zoneId: inbox.zoneId, drafts)
                        answers.append(.init(zoneId: inbox.zoneId, records: saved.map(ZoneWire.RecordView.init)))
                    } catch let error as ZoneError {
                        answers.append(.init(zoneId: inbox.zoneId, error: error.code == .zoneNotFound ? "ZoneNotFound" : "InvalidRequest",
                                             message: error.context))
                    }
                }
                return try json(ZoneWire.SaveToInboxesOutput(inboxes: answers))
            case .getUsage, .compactZone, .putInboxCapability:
                return try json(XRPCErrorBody(error: "MethodNotImplemented", message: "not in the loopback server"), status: .notImplemented)
            }
        } catch let error as ZoneError {
            return try failure(error)
        } catch is DecodingError {
            return try json(XRPCErrorBody(error: "InvalidRequest", message: "undecodable body"), status: .badRequest)
        }
    }

    /// The token's `lxm` if its EdDSA signature verifies against its did:key issuer and its
    /// audience is this service.
    private static func verifiedMethod(_ request: Request) -> String? {
        claims(request)?.lxm
    }

    private static func verifiedIssuer(_ request: Request) -> String? {
        claims(request)?.iss
    }

    private static func claims(_ request: Request) -> ServiceAuthClaims? {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { return nil }
        let parts = header.dropFirst(7).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let claimsData = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2]),
              let claims = try? JSONDecoder().decode(ServiceAuthClaims.self, from: claimsData),
              claims.aud == serviceDID, let issuer = try? DIDKey(did: claims.iss),
              issuer.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { return nil }
        return claims
    }
}
