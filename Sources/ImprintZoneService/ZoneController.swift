import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import ImprintDelivery
import ImprintServer
import Logging
import NIOCore

/// The zone API's XRPC methods, one handler per method. Authenticated methods pass the
/// server's shared `XRPCGate` (same tokens, replay guard and per-DID rate limits as the
/// Delivery Service, `lxm` = `app.imprint.zone.<method>`). Three also answer without a
/// token, for reviewer-snapshot links: `getRecord` and `getAsset` with a snapshot's read
/// capability, `saveRecords` of comments with its comment capability (rate-limited per zone).
struct ZoneController: Sendable {
    let store: any ZoneServiceStore
    let gate: XRPCGate
    let configuration: ZoneServiceConfiguration
    let metrics: ServerMetrics
    let heartbeat: Duration
    /// Unauthenticated requests, per zone: comment appends, and capability reads.
    let commentLimiter: RateLimiter
    let capabilityReadLimiter: RateLimiter

    /// Adds every zone route to `routes`. The three capability routes come last, behind
    /// ``capabilityCORS``: a reviewer's self-contained link-form file runs at a `file://`
    /// origin (`null`) and must read the snapshot and post comments cross-origin.
    func add(to routes: RouteCollection<DeliveryRequestContext>) {
        add(.createZone, to: routes, createZone)
        add(.deleteZone, to: routes, deleteZone)
        add(.uploadAsset, to: routes, uploadAsset)
        add(.fetchChanges, to: routes, fetchChanges)
        add(.deleteRecords, to: routes, deleteRecords)
        add(.subscribeZone, to: routes, subscribeZone)
        add(.getUsage, to: routes, getUsage)
        add(.compactZone, to: routes, compactZone)
        add(.saveToInboxes, to: routes, saveToInboxes)
        add(.putInboxCapability, to: routes, putInboxCapability)
        routes.add(middleware: Self.capabilityCORS)
        // Inside CORS, so that a rejection (410 for a revoked link) is a response that gets
        // the CORS headers: without them the browser hides the status from the viewer.
        routes.add(middleware: ContractErrorMiddleware(logger: Logger(label: "imprint.zone"), knownPaths: []))
        routes.post(RouterPath(ZoneMethod.saveRecords.path), use: saveRecords)
        routes.get(RouterPath(ZoneMethod.getRecord.path), use: getRecord)
        routes.get(RouterPath(ZoneMethod.getAsset.path), use: getAsset)
        for method in [ZoneMethod.saveRecords, .getRecord, .getAsset] {
            // The preflight of a cross-origin POST with a JSON body; the middleware answers
            // it (204) when the request has an Origin, this route when it has none.
            routes.on(RouterPath(method.path), method: .options) { _, _ in Response(status: .noContent) }
        }
    }

    /// Cross-origin access for the capability routes, for any origin (`*`) and without
    /// credentials: these routes authorise by the capability in the request, never by a
    /// cookie, and `Authorization` is not an allowed header, so a browser page can make only
    /// the unauthenticated (capability) calls; members' signed calls come from the CLI and
    /// apps, which CORS does not concern.
    static let capabilityCORS = CORSMiddleware<DeliveryRequestContext>(
        allowOrigin: .all, allowHeaders: [.contentType], allowMethods: [.get, .post, .options], allowCredentials: false,
        maxAge: .seconds(600))

    private func add(
        _ method: ZoneMethod, to routes: RouteCollection<DeliveryRequestContext>,
        _ handler: @escaping @Sendable (Request, String) async throws -> Response
    ) {
        routes.xrpc(nsid: method.nsid, route: "zone.\(method.rawValue)", procedure: method.isProcedure, gate: gate, handler)
    }

    /// The caller DID when the request has a token; nil (after the per-zone limiter admitted it)
    /// when it has none, for the methods a capability may call.
    private func optionalCaller(
        _ request: Request, context: DeliveryRequestContext, method: ZoneMethod
    ) async throws -> String? {
        if request.headers[.authorization] != nil {
            return try await gate.caller(of: request, context: context, nsid: method.nsid, route: "zone.\(method.rawValue)")
        }
        context.annotations.route = "zone.\(method.rawValue)"
        return nil
    }

    // MARK: Zones

    @Sendable func createZone(_ request: Request, caller: String) async throws -> Response {
        let input = try await RequestBodyReader.decode(CreateZoneInput.self, from: request, limit: configuration.bodyLimit)
        let zone = try ZoneID(input.zoneId)
        if let convoId = input.convoId { try InputRules.convoId(convoId) }
        return try json(CreateZoneOutput(zone: try await store.createZone(zone, convoId: input.convoId, caller: caller, now: Date())))
    }

    @Sendable func deleteZone(_ request: Request, caller: String) async throws -> Response {
        let input = try await RequestBodyReader.decode(ZoneRefInput.self, from: request, limit: configuration.bodyLimit)
        try await store.deleteZone(try ZoneID(input.zoneId), caller: caller)
        return try json(EmptyOutput())
    }

    @Sendable func getUsage(_ request: Request, caller: String) async throws -> Response {
        _ = try query(request, allowed: [])
        return try json(GetUsageOutput(zones: try await store.usage(owner: caller), quotaBytes: configuration.quotaBytes))
    }

    // MARK: Assets

    /// Streams the body to a staged file (hashing as it goes; `hash`, when given, must match),
    /// then lets the store place it.
    @Sendable func uploadAsset(_ request: Request, caller: String) async throws -> Response {
        let query = try query(request, allowed: ["zoneId", "recordType", "hash"])
        let zone = try ZoneID(try query.required("zoneId"))
        let expected = try query.single("hash")
        if let expected { try InputRules.hash(expected) }
        let recordType = try query.single("recordType")
        if let recordType { try ZoneInputRules.recordType(recordType) }
        let limit = recordType == "attachment" ? configuration.attachmentLimit : configuration.assetLimit
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        if let declared, declared > limit { throw DeliveryError.payloadTooLarge(limit: limit) }
        let capability = try inboxCapability(request)
        try await store.admitUpload(zone, caller: caller, inboxCapability: capability, size: declared ?? 0, quota: configuration.quotaBytes)
        let staged = try await StagedAsset.stage(request.body, limit: limit, in: store.stagingDirectory, durable: store.keepsStagedFiles)
        guard staged.size > 0 else {
            staged.discard()
            throw DeliveryError.invalidRequest("empty body; expected the asset's bytes")
        }
        if let expected, expected != staged.hash {
            staged.discard()
            throw DeliveryError.invalidRequest("the body's SHA-256 is \(staged.hash), not \(expected)")
        }
        try await store.commitUpload(zone, caller: caller, inboxCapability: capability, staged: staged, quota: configuration.quotaBytes, now: Date())
        return try json(ZoneAssetRef(hash: staged.hash, size: staged.size))
    }

    @Sendable func getAsset(_ request: Request, context: DeliveryRequestContext) async throws -> Response {
        let caller = try await optionalCaller(request, context: context, method: .getAsset)
        let query = try query(request, allowed: ["zoneId", "hash", "recordName"])
        let zone = try ZoneID(try query.required("zoneId"))
        let hash = try query.required("hash")
        try InputRules.hash(hash)
        let reader: ZoneReader
        if let caller {
            reader = .did(caller)
        } else {
            guard let name = try query.single("recordName") else { throw DeliveryError.authRequired() }
            try ZoneInputRules.recordName(name)
            guard capabilityReadLimiter.admit(zone.raw) else { throw DeliveryError.rateLimited() }
            reader = .snapshotCapability(recordName: name)
        }
        let asset = try await store.readableAsset(zone, reader: reader, hash: hash, now: Date())
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        headers[.acceptRanges] = "bytes"
        var status = HTTPResponse.Status.ok
        var range = 0..<asset.size
        if let header = request.headers[.range], let requested = ByteRange(header: header) {
            guard let resolved = requested.resolve(size: asset.size) else {
                var response = DeliveryError.rangeNotSatisfiable(size: asset.size).makeResponse()
                response.headers[.contentRange] = "bytes */\(asset.size)"
                return response
            }
            range = resolved
            status = .partialContent
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(asset.size)"
        }
        let body = ResponseBody(contentLength: range.count) { [store, range] writer in
            try await store.writeAsset(hash: hash, range: range, to: &writer)
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }

    // MARK: Records

    @Sendable func saveRecords(_ request: Request, context: DeliveryRequestContext) async throws -> Response {
        let caller = try await optionalCaller(request, context: context, method: .saveRecords)
        let input = try await RequestBodyReader.decode(SaveRecordsInput.self, from: request, limit: configuration.saveBodyLimit)
        let zone = try ZoneID(input.zoneId)
        guard (1...configuration.maxRecordsPerSave).contains(input.records.count) else {
            throw DeliveryError.invalidRequest("records must hold 1 to \(configuration.maxRecordsPerSave) records")
        }
        guard Set(input.records.map(\.recordName)).count == input.records.count else {
            throw DeliveryError.invalidRequest("records repeats a recordName")
        }
        let writer: ZoneWriter
        if let caller {
            writer = .did(caller)
        } else {
            guard let snapshotName = input.snapshotName, let capability = input.commentCapability else { throw DeliveryError.authRequired() }
            guard zone.kind == .snapshot else { throw DeliveryError.authRequired() }
            try ZoneInputRules.recordName(snapshotName)
            guard (1...256).contains(capability.utf8.count) else { throw DeliveryError.invalidRequest("commentCapability must be 1-256 bytes") }
            for record in input.records {
                guard record.recordType == "comment", record.asset == nil, (record.assetData?.count ?? 0) <= configuration.commentLimit else {
                    throw DeliveryError.forbidden("a comment capability appends comment records with inline data of at most \(configuration.commentLimit) bytes")
                }
            }
            guard commentLimiter.admit(zone.raw) else { throw DeliveryError.rateLimited() }
            writer = .commentCapability(snapshotName: snapshotName, capabilityHash: CommitDigest.hex(Data(capability.utf8)))
        }
        var saves: [RecordSave] = []
        var staged: [String: StagedAsset] = [:]
        do {
            for record in input.records {
                saves.append(try recordSave(record, staged: &staged))
            }
            let records = try await store.saveRecords(RecordBatch(
                zone: zone, writer: writer, records: saves, quota: configuration.quotaBytes, now: Date(),
                inboxCapability: try inboxCapability(request)))
            return try json(SaveRecordsOutput(records: records))
        } catch {
            for asset in staged.values { asset.discard() }
            throw error
        }
    }

    /// v1.1: records for several inbox zones in one request, the fan-out of mailbox delivery
    /// (one copy of a message per recipient). v1.3: `records` beside `inboxes` go to every
    /// inbox that lists none of its own, so a message's payload travels once per request, not
    /// once per recipient (the v1.1 shape, records in each inbox, is still taken). Each inbox
    /// is decided with `saveRecords`' rules and gets its own answer, in order: its records, or
    /// the error that refused it (none made yet, the caller shares no convo with its owner),
    /// which leaves the others saved. The store saves them all in one transaction
    /// (`ZoneServiceStore.saveToInboxes`); each distinct inline payload is staged and stored
    /// once. At most `maxRecordsPerSave` records in all, counted per inbox.
    @Sendable func saveToInboxes(_ request: Request, caller: String) async throws -> Response {
        let input = try await RequestBodyReader.decode(SaveToInboxesInput.self, from: request, limit: configuration.saveBodyLimit)
        guard !input.inboxes.isEmpty else { throw DeliveryError.invalidRequest("inboxes must name 1 or more inboxes") }
        guard Set(input.inboxes.map(\.zoneId)).count == input.inboxes.count else {
            throw DeliveryError.invalidRequest("inboxes repeats a zoneId")
        }
        var total = 0
        for inbox in input.inboxes {
            let zone = try ZoneID(inbox.zoneId)
            guard zone.kind == .inbox else { throw DeliveryError.invalidRequest("\(inbox.zoneId) is not an inbox zone") }
            guard let records = inbox.records ?? input.records else {
                throw DeliveryError.invalidRequest("\(inbox.zoneId) has no records, and the request none for every inbox")
            }
            guard !records.isEmpty, Set(records.map(\.recordName)).count == records.count else {
                throw DeliveryError.invalidRequest("\(inbox.zoneId): records must be 1 or more, each name once")
            }
            if let capability = inbox.capability { _ = try Self.capabilityHash(capability) }
            total += records.count
        }
        guard (1...configuration.maxRecordsPerSave).contains(total) else {
            throw DeliveryError.invalidRequest("inboxes must hold 1 to \(configuration.maxRecordsPerSave) records in all")
        }
        var staged: [String: StagedAsset] = [:]
        do {
            let shared = try input.records.map { try $0.map { try recordSave($0, staged: &staged) } }
            var inboxes: [InboxFanOut.Inbox] = []
            for inbox in input.inboxes {
                let records = try inbox.records.map { try $0.map { try recordSave($0, staged: &staged) } } ?? shared ?? []
                inboxes.append(InboxFanOut.Inbox(
                    zone: try ZoneID(inbox.zoneId), records: records, capabilityHash: try inbox.capability.map(Self.capabilityHash)))
            }
            let outcomes = try await store.saveToInboxes(InboxFanOut(
                writer: caller, inboxes: inboxes, quota: configuration.quotaBytes, now: Date()))
            return try json(SaveToInboxesOutput(inboxes: zip(input.inboxes, outcomes).map { inbox, outcome in
                switch outcome {
                case .success(let records): return .init(zoneId: inbox.zoneId, records: records)
                case .failure(let refusal): return .init(zoneId: inbox.zoneId, error: refusal.name, message: refusal.message)
                }
            }))
        } catch {
            for asset in staged.values { asset.discard() }
            throw error
        }
    }

    /// `record` checked and ready for the store; its inline bytes staged, once per distinct
    /// payload of the request (`staged`, by hash).
    private func recordSave(_ record: RecordToSave, staged: inout [String: StagedAsset]) throws -> RecordSave {
        try ZoneInputRules.recordName(record.recordName)
        try ZoneInputRules.recordType(record.recordType)
        let fields = record.fields ?? [:]
        let routing = try ZoneInputRules.fields(fields, limit: configuration.fieldsLimit)
        let fieldsJSON = String(decoding: try WireJSON.encoder().encode(fields), as: UTF8.self)
        if record.asset != nil, record.assetData != nil {
            throw DeliveryError.invalidRequest("record \(record.recordName) has both asset and assetData")
        }
        if let asset = record.asset {
            try InputRules.hash(asset.hash)
            let limit = record.recordType == "attachment" ? configuration.attachmentLimit : configuration.assetLimit
            guard (1...limit).contains(asset.size) else { throw DeliveryError.invalidRequest("asset.size must be 1...\(limit)") }
        }
        var inline: StagedAsset?
        if let data = record.assetData {
            guard data.count <= configuration.inlineAssetLimit else {
                throw DeliveryError.payloadTooLarge(limit: configuration.inlineAssetLimit)
            }
            guard !data.isEmpty else { throw DeliveryError.invalidRequest("assetData of \(record.recordName) is empty") }
            let hash = CommitDigest.hex(data)
            if let known = staged[hash] {
                inline = known
            } else {
                let asset = try StagedAsset.stage(data, in: store.stagingDirectory)
                staged[hash] = asset
                inline = asset
            }
        }
        return RecordSave(
            name: record.recordName, type: record.recordType, fields: fields, fieldsJSON: fieldsJSON, routing: routing,
            asset: record.asset, inline: inline)
    }

    @Sendable func fetchChanges(_ request: Request, caller: String) async throws -> Response {
        let query = try query(request, allowed: ["zoneId", "since", "limit"])
        let zone = try ZoneID(try query.required("zoneId"))
        let limit = try query.integer("limit", in: 1...configuration.maxChangesPerPage) ?? configuration.defaultChangesPerPage
        return try json(try await store.changes(zone, caller: caller, since: try query.single("since"), limit: limit))
    }

    @Sendable func getRecord(_ request: Request, context: DeliveryRequestContext) async throws -> Response {
        let caller = try await optionalCaller(request, context: context, method: .getRecord)
        let query = try query(request, allowed: ["zoneId", "recordName"])
        let zone = try ZoneID(try query.required("zoneId"))
        let name = try query.required("recordName")
        try ZoneInputRules.recordName(name)
        let reader: ZoneReader
        if let caller {
            reader = .did(caller)
        } else {
            guard zone.kind == .snapshot else { throw DeliveryError.authRequired() }
            guard capabilityReadLimiter.admit(zone.raw) else { throw DeliveryError.rateLimited() }
            reader = .snapshotCapability(recordName: name)
        }
        return try json(GetRecordOutput(record: try await store.record(zone, reader: reader, name: name, now: Date())))
    }

    @Sendable func deleteRecords(_ request: Request, caller: String) async throws -> Response {
        let input = try await RequestBodyReader.decode(DeleteRecordsInput.self, from: request, limit: configuration.bodyLimit)
        let zone = try ZoneID(input.zoneId)
        guard (1...1000).contains(input.recordNames.count) else { throw DeliveryError.invalidRequest("recordNames must name 1 to 1000 records") }
        for name in input.recordNames { try ZoneInputRules.recordName(name) }
        var seen = Set<String>()
        let names = input.recordNames.filter { seen.insert($0).inserted }
        let deleted = try await store.deleteRecords(
            zone, caller: caller, names: names, now: Date(), tombstoneRetention: configuration.tombstoneRetentionSeconds)
        return try json(DeleteRecordsOutput(deleted: deleted))
    }

    /// v1.1: compacts a shared zone now (`ZoneCompaction`), for an active member of its convo.
    @Sendable func compactZone(_ request: Request, caller: String) async throws -> Response {
        let input = try await RequestBodyReader.decode(ZoneRefInput.self, from: request, limit: configuration.bodyLimit)
        let zone = try ZoneID(input.zoneId)
        return try json(try await store.compact(zone, caller: caller, now: Date()))
    }

    // MARK: Inbox write capabilities

    /// v1.2: the owner of an inbox registers (or, without `keyHash`, withdraws) write
    /// capability `name` of it. Senders who share no convo with the owner on this server
    /// (their group lives on another) present the capability's value to append: the
    /// `Imprint-Inbox-Capability` header of `saveRecords` and `uploadAsset`, or an inbox's
    /// `capability` in `saveToInboxes`. Only its SHA-256 is stored.
    @Sendable func putInboxCapability(_ request: Request, caller: String) async throws -> Response {
        let input = try await RequestBodyReader.decode(PutInboxCapabilityInput.self, from: request, limit: configuration.bodyLimit)
        let zone = try ZoneID(input.zoneId)
        guard zone.kind == .inbox else { throw DeliveryError.invalidRequest("\(input.zoneId) is not an inbox zone") }
        guard (1...128).contains(input.name.utf8.count), input.name.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw DeliveryError.invalidRequest("name must be 1-128 printable ASCII characters")
        }
        if let keyHash = input.keyHash { try InputRules.hash(keyHash) }
        try await store.putInboxCapability(zone, caller: caller, name: input.name, keyHash: input.keyHash,
                                           limit: configuration.maxInboxCapabilities, now: Date())
        return try json(EmptyOutput())
    }

    /// The header that carries an inbox write capability.
    static let inboxCapabilityHeader = HTTPField.Name("Imprint-Inbox-Capability")!

    /// The SHA-256 hex of the request's inbox write capability, if it presented one.
    private func inboxCapability(_ request: Request) throws -> String? {
        try request.headers[Self.inboxCapabilityHeader].map(Self.capabilityHash)
    }

    /// The stored form of a presented capability (1-256 bytes).
    static func capabilityHash(_ capability: String) throws -> String {
        guard (1...256).contains(capability.utf8.count) else { throw DeliveryError.invalidRequest("an inbox capability must be 1-256 bytes") }
        return CommitDigest.hex(Data(capability.utf8))
    }

    // MARK: Subscriptions

    /// `changed` events naming the zone's newest change token, one per wake-up that finds the
    /// zone past the cursor. Access is checked again on every read: a member removed from the
    /// convo has its stream ended at the next change.
    @Sendable func subscribeZone(_ request: Request, caller: String) async throws -> Response {
        let query = try query(request, allowed: ["zoneId", "cursor"])
        let zone = try ZoneID(try query.required("zoneId"))
        let current = try await store.currentToken(zone, caller: caller)
        var cursorText = try query.single("cursor")
        if let lastEventID = request.headers[.lastEventID] { cursorText = lastEventID.trimmingCharacters(in: .whitespaces) }
        var start: Int64 = 0
        if let cursorText {
            guard let token = ChangeToken(parsing: cursorText), token.incarnation == current.incarnation, token.change <= current.change else {
                throw DeliveryError.changeTokenExpired()
            }
            start = token.change
        }
        let store = self.store
        return EventStreamResponder<Int64>(
            bell: store.bell, key: ZoneEvents.key(zone.raw), metrics: metrics, heartbeat: heartbeat
        ) { cursor in
            let token = try await store.currentToken(zone, caller: caller)
            guard token.change > cursor else { return (nil, cursor, false) }
            var buffer = ByteBuffer()
            buffer.writeString("id: \(token.text)\nevent: changed\ndata: ")
            buffer.writeBytes(try WireJSON.encoder().encode(ZoneChangedEvent(zoneId: zone.raw, changeToken: token.text)))
            buffer.writeString("\n\n")
            return (buffer, token.change, false)
        }.response(after: start)
    }

    private func query(_ request: Request, allowed: Set<String>) throws -> QueryParameters {
        try QueryParameters(query: request.uri.query ?? "", allowed: allowed)
    }
}
