import Foundation
import HTTPTypes
import Hummingbird
import ImprintMLSWire
import ImprintDelivery
import NIOCore

/// The Delivery Service's XRPC methods, one handler per method: each reads and checks its
/// input, calls the store and encodes the output. Authentication, replay protection and rate
/// limiting happen before a handler runs (`XRPCGate`), except for `sendMessage`, whose token
/// the store admits in the same transaction as the message.
struct DeliveryController: Sendable {
    let store: any DeliveryStore
    let gate: XRPCGate
    let configuration: DeliveryServerConfiguration
    let metrics: ServerMetrics

    /// Every Delivery Service method (not `_health`, see `ServiceController`).
    var routes: RouteCollection<DeliveryRequestContext> {
        let routes = RouteCollection(context: DeliveryRequestContext.self)
        add(.publishKeyPackage, to: routes, publishKeyPackage)
        add(.getKeyPackages, to: routes, getKeyPackages)
        add(.createConvo, to: routes, createConvo)
        add(.getConvos, to: routes, getConvos)
        add(.addMembers, to: routes, addMembers)
        add(.getWelcome, to: routes, getWelcome)
        add(.confirmWelcome, to: routes, confirmWelcome)
        add(.removeMember, to: routes, removeMember)
        add(.leaveConvo, to: routes, leaveConvo)
        add(.setAdmins, to: routes, setAdmins)
        routes.post(RouterPath(DeliveryMethod.sendMessage.path), use: sendMessage)
        add(.getMessages, to: routes, getMessages)
        add(.registerStorage, to: routes, registerStorage)
        add(.subscribeConvoEvents, to: routes, subscribeConvoEvents)
        add(.sendEphemeral, to: routes, sendEphemeral)
        add(.subscribeEphemeral, to: routes, subscribeEphemeral)
        add(.ephemeralSocket, to: routes, ephemeralSocket)
        add(.updateCursor, to: routes, updateCursor)
        add(.markCheckpoint, to: routes, markCheckpoint)
        add(.getCursors, to: routes, getCursors)
        return routes
    }

    private func add(
        _ method: DeliveryMethod, to routes: RouteCollection<DeliveryRequestContext>,
        _ handler: @escaping @Sendable (Request, String) async throws -> Response
    ) {
        routes.xrpc(nsid: method.nsid, route: method.rawValue, procedure: method.isProcedure, gate: gate, handler)
    }

    // MARK: Key packages

    @Sendable func publishKeyPackage(_ request: Request, caller: String) async throws -> Response {
        let now = Date()
        let input = try await body(PublishKeyPackageInput.self, request)
        try InputRules.nonEmpty(input.keyPackage, field: "keyPackage")
        try InputRules.cipherSuite(input.cipherSuite)
        guard input.expiresAt > now else { throw DeliveryError.invalidRequest("expiresAt is in the past") }
        do {
            _ = try KeyPackageShape(Array(input.keyPackage), cipherSuite: input.cipherSuite)
        } catch {
            throw DeliveryError.invalidRequest("keyPackage is not a well-formed MLS KeyPackage of suite \(input.cipherSuite): \(error)")
        }
        let id = try await store.publishKeyPackage(NewKeyPackage(
            did: caller, keyPackage: input.keyPackage, cipherSuite: input.cipherSuite, expiresAt: input.expiresAt,
            now: now, limit: configuration.maxKeyPackagesPerDID))
        return try json(PublishKeyPackageOutput(id: id))
    }

    @Sendable func getKeyPackages(_ request: Request, caller: String) async throws -> Response {
        let query = try self.query(request, allowed: ["dids", "cipherSuite"])
        var dids: [String] = []
        for did in query.all("dids") where !dids.contains(did) {
            try InputRules.did(did, field: "dids")
            dids.append(did)
        }
        guard (1...configuration.maxDIDsPerKeyPackageRequest).contains(dids.count) else {
            throw DeliveryError.invalidRequest("dids must name 1 to \(configuration.maxDIDsPerKeyPackageRequest) DIDs")
        }
        let suite = try query.integer("cipherSuite", in: InputRules.cipherSuites)
        let handedOut = try await store.consumeKeyPackages(dids: dids, cipherSuite: suite, now: Date())
        let served = Set(handedOut.map(\.did))
        return try json(GetKeyPackagesOutput(keyPackages: handedOut, missing: dids.filter { !served.contains($0) }))
    }

    // MARK: Convos and membership

    @Sendable func createConvo(_ request: Request, caller: String) async throws -> Response {
        let input = try await body(CreateConvoInput.self, request)
        try InputRules.cipherSuite(input.cipherSuite)
        if let id = input.convoId { try InputRules.convoId(id) }
        if let title = input.title { try InputRules.text(title, field: "title", maxBytes: 1024) }
        let admins = try Self.admins(input.admins ?? [])
        let id = input.convoId ?? Self.newConvoId()
        let convo = try await store.createConvo(NewConvo(
            id: id, creator: caller, title: input.title, cipherSuite: input.cipherSuite, admins: admins, now: Date()))
        return try json(CreateConvoOutput(convo: convo))
    }

    /// v1.1: the creator replaces the admins it names.
    @Sendable func setAdmins(_ request: Request, caller: String) async throws -> Response {
        let input = try await body(SetAdminsInput.self, request)
        try InputRules.convoId(input.convoId)
        let convo = try await store.setAdmins(convoId: input.convoId, caller: caller, admins: try Self.admins(input.admins))
        return try json(SetAdminsOutput(convo: convo))
    }

    /// An `admins` list: DIDs, at most `maxAdmins`, duplicates dropped (first kept).
    static func admins(_ dids: [String]) throws -> [String] {
        guard dids.count <= maxAdmins else { throw DeliveryError.invalidRequest("admins names more than \(maxAdmins) DIDs") }
        var seen = Set<String>()
        return try dids.filter { did in
            try InputRules.did(did, field: "admins")
            return seen.insert(did).inserted
        }
    }

    static let maxAdmins = 100

    @Sendable func getConvos(_ request: Request, caller: String) async throws -> Response {
        _ = try self.query(request, allowed: [])
        return try json(GetConvosOutput(convos: try await store.convos(memberDID: caller)))
    }

    @Sendable func addMembers(_ request: Request, caller: String) async throws -> Response {
        let input = try await body(AddMembersInput.self, request, limit: configuration.largeBodyLimit)
        try InputRules.convoId(input.convoId)
        try InputRules.epoch(input.epoch)
        guard !input.dids.isEmpty, input.dids.count <= 1000 else { throw DeliveryError.invalidRequest("dids must name 1 to 1000 DIDs") }
        for did in input.dids { try InputRules.did(did, field: "dids") }
        guard Set(input.dids).count == input.dids.count else { throw DeliveryError.invalidRequest("dids repeats a DID") }
        try InputRules.nonEmpty(input.commit, field: "commit")
        try InputRules.nonEmpty(input.welcome, field: "welcome")
        return try json(try await store.addMembers(MemberAddition(
            convoId: input.convoId, caller: caller, epoch: input.epoch, dids: input.dids, commit: input.commit,
            welcome: input.welcome, now: Date())))
    }

    @Sendable func getWelcome(_ request: Request, caller: String) async throws -> Response {
        let convoId = try query(request, allowed: ["convoId"]).required("convoId")
        try InputRules.convoId(convoId)
        guard let welcome = try await store.welcome(convoId: convoId, did: caller) else { throw DeliveryError.noWelcome(convoId) }
        return try json(welcome)
    }

    @Sendable func confirmWelcome(_ request: Request, caller: String) async throws -> Response {
        let input = try await body(ConvoRefInput.self, request)
        try InputRules.convoId(input.convoId)
        try await store.deleteWelcome(convoId: input.convoId, did: caller)
        return try json(EmptyOutput())
    }

    @Sendable func removeMember(_ request: Request, caller: String) async throws -> Response {
        let input = try await body(RemoveMemberInput.self, request, limit: configuration.largeBodyLimit)
        try InputRules.convoId(input.convoId)
        try InputRules.epoch(input.epoch)
        try InputRules.did(input.did, field: "did")
        try InputRules.nonEmpty(input.commit, field: "commit")
        // MLS has no commit that removes its own committer (RFC 9420 §12.2); a member who
        // wants out calls leaveConvo and the next committer removes it.
        guard input.did != caller else {
            throw DeliveryError.invalidRequest("a member cannot remove itself; call leaveConvo, and another member commits the removal")
        }
        return try json(try await store.removeMember(MemberRemoval(
            convoId: input.convoId, caller: caller, epoch: input.epoch, did: input.did, commit: input.commit, now: Date())))
    }

    @Sendable func leaveConvo(_ request: Request, caller: String) async throws -> Response {
        let input = try await body(ConvoRefInput.self, request)
        try InputRules.convoId(input.convoId)
        try await store.leaveConvo(convoId: input.convoId, did: caller, now: Date())
        return try json(EmptyOutput())
    }

    // MARK: Messages

    /// `sendMessage`, the hot path: the token's jti is admitted by the store in the same
    /// transaction as the message (one database round trip on PostgreSQL). When the request
    /// fails before reaching the store, the token is admitted here first, so a rejected request
    /// still uses its token up and a replayed one is reported as a replay, as for other methods.
    @Sendable func sendMessage(_ request: Request, context: DeliveryRequestContext) async throws -> Response {
        context.annotations.route = DeliveryMethod.sendMessage.rawValue
        let token = try await gate.verifier.verify(authorization: request.headers[.authorization], method: .sendMessage)
        context.annotations.caller = token.issuer
        let message: NewMessage
        do {
            guard gate.rateLimiter.admit(token.issuer) else { throw DeliveryError.rateLimited() }
            let input = try await RequestBodyReader.decode(
                SendMessageInput.self, from: request, limit: configuration.largeBodyLimit, plain: SendMessageInput.init(plainJSON:))
            try InputRules.convoId(input.convoId)
            try InputRules.epoch(input.epoch)
            try InputRules.hash(input.hash)
            guard input.size >= 0 else { throw DeliveryError.invalidRequest("size must not be negative") }
            if let name = input.recordName { try InputRules.text(name, field: "recordName", maxBytes: 512) }
            if let id = input.clientMessageId { try InputRules.clientMessageId(id) }
            if let commit = input.commit { try InputRules.commitBytes(commit, type: input.messageType, hash: input.hash) }
            message = NewMessage(
                convoId: input.convoId, sender: token.issuer, epoch: input.epoch, messageType: input.messageType,
                hash: input.hash, size: input.size, recordName: input.recordName,
                clientMessageId: input.clientMessageId, commit: input.commit, now: Date())
        } catch {
            try await token.admit(with: gate.verifier.replayGuard)
            throw error
        }
        return json(bytes: try await store.sendMessage(message, admitting: token).wireJSON())
    }

    @Sendable func getMessages(_ request: Request, caller: String) async throws -> Response {
        let query = try self.query(request, allowed: ["convoId", "sinceSeq", "limit"])
        let convoId = try query.required("convoId")
        try InputRules.convoId(convoId)
        let sinceSeq = try query.integer("sinceSeq", in: 0...Int(Int64.max)) ?? 0
        let limit = try query.integer("limit", in: 1...configuration.maxMessagesPerPage) ?? configuration.defaultMessagesPerPage
        let messages = try await store.messages(convoId: convoId, caller: caller, sinceSeq: sinceSeq, limit: limit)
        return try json(GetMessagesOutput(messages: messages, cursor: messages.count == limit ? messages.last?.seq : nil))
    }

    // MARK: Storage and events

    @Sendable func registerStorage(_ request: Request, caller: String) async throws -> Response {
        let input = try await body(RegisterStorageInput.self, request)
        try InputRules.text(input.provider.type, field: "provider.type", maxBytes: 64)
        guard !input.provider.type.isEmpty else { throw DeliveryError.invalidRequest("provider.type is empty") }
        if let endpoint = input.provider.endpoint { try InputRules.text(endpoint, field: "provider.endpoint", maxBytes: 2048) }
        try await store.registerStorage(did: caller, provider: input.provider)
        return try json(EmptyOutput())
    }

    @Sendable func subscribeConvoEvents(_ request: Request, caller: String) async throws -> Response {
        let query = try self.query(request, allowed: ["cursor"])
        var cursor = Int64(try query.integer("cursor", in: 0...Int(Int64.max)) ?? 0)
        if let lastEventID = request.headers[.lastEventID] {
            guard let value = Int64(lastEventID.trimmingCharacters(in: .whitespaces)), value >= 0 else {
                throw DeliveryError.invalidRequest("Last-Event-ID must be a cursor")
            }
            cursor = value
        }
        return EventStreamResponder<Int64>.convoEvents(store: store, recipient: caller, metrics: metrics, heartbeat: configuration.eventHeartbeat)
            .response(after: cursor)
    }

    // MARK: Ephemeral messages (v1.2)

    @Sendable func sendEphemeral(_ request: Request, caller: String) async throws -> Response {
        let input = try await body(SendEphemeralInput.self, request)
        try InputRules.convoId(input.convoId)
        try InputRules.ephemeral(input, maxBytes: configuration.maxEphemeralBytes)
        guard try await store.isActiveMember(convoId: input.convoId, did: caller) else { throw DeliveryError.notMember(input.convoId) }
        try await store.relayEphemeral(EphemeralMessage(convoId: input.convoId, sender: caller, epoch: input.epoch, data: input.data,
                                                        kind: input.kind))
        return try json(EmptyOutput())
    }

    @Sendable func subscribeEphemeral(_ request: Request, caller: String) async throws -> Response {
        let query = try self.query(request, allowed: ["convoId"])
        let convoId = try query.required("convoId")
        try InputRules.convoId(convoId)
        guard try await store.isActiveMember(convoId: convoId, did: caller) else { throw DeliveryError.notMember(convoId) }
        return EphemeralStreamResponder(store: store, convoId: convoId, subscriber: caller, metrics: metrics,
                                        heartbeat: configuration.eventHeartbeat).response()
    }

    /// v1.5: `ephemeralSocket` without `Upgrade: websocket` (an upgrade request never gets
    /// here: ``EphemeralSocketAdmission`` admits or refuses it). It gets the answers an upgrade
    /// request would get (401 from the gate, 400 for the query, 403 for a non-member), and a
    /// request that passes them is told to ask for the upgrade: the client asks this way to
    /// learn why its upgrade was refused.
    @Sendable func ephemeralSocket(_ request: Request, caller: String) async throws -> Response {
        let query = try self.query(request, allowed: ["convoId"])
        let convoId = try query.required("convoId")
        try InputRules.convoId(convoId)
        guard try await store.isActiveMember(convoId: convoId, did: caller) else { throw DeliveryError.notMember(convoId) }
        throw DeliveryError.invalidRequest("ephemeralSocket is a WebSocket: send the request with Upgrade: websocket on a new connection")
    }

    // MARK: Input

    func body<Input: Decodable>(_ type: Input.Type, _ request: Request, limit: Int? = nil) async throws -> Input {
        try await RequestBodyReader.decode(type, from: request, limit: limit ?? configuration.bodyLimit)
    }

    func query(_ request: Request, allowed: Set<String>) throws -> QueryParameters {
        try QueryParameters(query: request.uri.query ?? "", allowed: allowed)
    }

    static func newConvoId() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
