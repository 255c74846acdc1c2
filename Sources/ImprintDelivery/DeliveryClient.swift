import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// An async client for the Delivery Service API: one method per API method,
/// each call signed with a fresh service-auth token.
public struct DeliveryClient: Sendable {
    public let baseURL: String
    public let serviceDID: String
    public let signer: ServiceAuthSigner
    public let httpClient: HTTPClient
    public var timeout: TimeAmount = .seconds(30)
    /// How many times a request refused with 429 `RateLimited` is sent again, each after the
    /// wait the answer's `Retry-After` asks for (`RateLimitBackoff`), before
    /// ``DeliveryServiceError`` is thrown.
    public var rateLimitRetries = 3

    /// - Parameters:
    ///   - baseURL: e.g. `http://127.0.0.1:8080`, no trailing slash.
    ///   - serviceDID: the `aud` the service expects (its `_health` tells it).
    ///   - signer: the caller's did:key identity, which signs every request's token.
    ///   - httpClient: the client requests go through (`HTTPClient.imprint` by default).
    public init(baseURL: String, serviceDID: String, signer: ServiceAuthSigner, httpClient: HTTPClient = .imprint) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.serviceDID = serviceDID
        self.signer = signer
        self.httpClient = httpClient
    }

    public var did: String { signer.did }

    // MARK: Methods

    public func health() async throws -> HealthStatus {
        try await send(HealthStatus.self, path: DeliveryPath.health, method: .GET, body: nil, lxm: nil)
    }

    public func publishKeyPackage(_ input: PublishKeyPackageInput) async throws -> PublishKeyPackageOutput {
        try await procedure(.publishKeyPackage, input)
    }

    public func getKeyPackages(dids: [String], cipherSuite: Int? = nil) async throws -> GetKeyPackagesOutput {
        var query = dids.map { ("dids", $0) }
        if let cipherSuite { query.append(("cipherSuite", String(cipherSuite))) }
        return try await self.query(.getKeyPackages, query)
    }

    public func createConvo(_ input: CreateConvoInput) async throws -> CreateConvoOutput {
        try await procedure(.createConvo, input)
    }

    public func getConvos() async throws -> GetConvosOutput {
        try await query(.getConvos, [])
    }

    public func addMembers(_ input: AddMembersInput) async throws -> EpochAdvanceOutput {
        try await procedure(.addMembers, input)
    }

    public func getWelcome(convoId: String) async throws -> GetWelcomeOutput {
        try await query(.getWelcome, [("convoId", convoId)])
    }

    public func confirmWelcome(convoId: String) async throws {
        let _: EmptyOutput = try await procedure(.confirmWelcome, ConvoRefInput(convoId: convoId))
    }

    public func removeMember(_ input: RemoveMemberInput) async throws -> EpochAdvanceOutput {
        try await procedure(.removeMember, input)
    }

    /// v1.1: who besides the creator may add and remove members; answers the updated convo.
    public func setAdmins(_ input: SetAdminsInput) async throws -> SetAdminsOutput {
        try await procedure(.setAdmins, input)
    }

    public func leaveConvo(convoId: String) async throws {
        let _: EmptyOutput = try await procedure(.leaveConvo, ConvoRefInput(convoId: convoId))
    }

    public func sendMessage(_ input: SendMessageInput) async throws -> SendMessageOutput {
        try await procedure(.sendMessage, input)
    }

    public func getMessages(convoId: String, sinceSeq: Int? = nil, limit: Int? = nil) async throws -> GetMessagesOutput {
        var query = [("convoId", convoId)]
        if let sinceSeq { query.append(("sinceSeq", String(sinceSeq))) }
        if let limit { query.append(("limit", String(limit))) }
        return try await self.query(.getMessages, query)
    }

    /// v1.3: moves the caller's processed cursor in `convoId` forward to `processedSeq`;
    /// returns the cursor as stored (never lower than before).
    @discardableResult
    public func updateCursor(convoId: String, processedSeq: Int) async throws -> Int {
        let output: UpdateCursorOutput = try await procedure(.updateCursor, UpdateCursorInput(convoId: convoId, processedSeq: processedSeq))
        return output.processedSeq
    }

    /// v1.3: marks the caller's application message `seq` as a checkpoint (its payload holds
    /// the whole document).
    public func markCheckpoint(convoId: String, seq: Int) async throws {
        let _: EmptyOutput = try await procedure(.markCheckpoint, MarkCheckpointInput(convoId: convoId, seq: seq))
    }

    /// v1.3: the active members' processed cursors and the convo's compaction point.
    public func getCursors(convoId: String) async throws -> GetCursorsOutput {
        try await query(.getCursors, [("convoId", convoId)])
    }

    public func registerStorage(_ provider: StorageProvider) async throws {
        let _: EmptyOutput = try await procedure(.registerStorage, RegisterStorageInput(provider: provider))
    }

    /// Streams events after `cursor` (all retained events when nil). The stream ends when the
    /// server closes the connection; resume by passing the last event's cursor.
    public func subscribeConvoEvents(cursor: Int64? = nil) -> AsyncThrowingStream<ConvoEvent, Error> {
        eventStream(.subscribeConvoEvents, query: cursor.map { [("cursor", String($0))] } ?? []) { event in
            guard let id = event.id, let cursor = Int64(id) else { return nil }
            return ConvoEvent(cursor: cursor, payload: try ConvoEventPayload(name: event.event, data: Data(event.data.utf8)))
        }
    }

    /// v1.2: relays `data` at once to the convo's members subscribed now; stored nowhere.
    public func sendEphemeral(_ input: SendEphemeralInput) async throws {
        let _: EmptyOutput = try await procedure(.sendEphemeral, input)
    }

    /// v1.2: the other members' ephemeral messages of `convoId` from now on. Ends when the
    /// caller is no longer a member (or the server shuts down); nothing sent while no stream
    /// was open comes back.
    public func subscribeEphemeral(convoId: String) -> AsyncThrowingStream<EphemeralMessage, Error> {
        eventStream(.subscribeEphemeral, query: [("convoId", convoId)]) { event in
            guard event.event == "ephemeral" else { return nil }
            return try WireJSON.decoder().decode(EphemeralMessage.self, from: Data(event.data.utf8))
        }
    }

    /// One server-sent-event stream of `method`, each event turned into an element by `element`
    /// (nil: skipped).
    private func eventStream<Element: Sendable>(
        _ method: DeliveryMethod, query: [(String, String)],
        _ element: @escaping @Sendable (ServerSentEvent) throws -> Element?
    ) -> AsyncThrowingStream<Element, Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var request = try makeRequest(path: method.path, query: query, method: .GET, lxm: method.nsid)
                    request.headers.add(name: "Accept", value: "text/event-stream")
                    let response = try await httpClient.execute(request, deadline: .distantFuture)
                    guard response.status == .ok else {
                        let body = try await response.body.collect(upTo: 1 << 20)
                        throw decodeError(status: Int(response.status.code), body: body)
                    }
                    var parser = ServerSentEventParser()
                    for try await chunk in response.body {
                        for event in parser.feed(chunk.readableBytesView) {
                            if let value = try element(event) { continuation.yield(value) }
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Transport

    private func procedure<Input: Encodable, Output: Decodable>(_ method: DeliveryMethod, _ input: Input) async throws -> Output {
        let body = try WireJSON.encoder().encode(input)
        return try await send(Output.self, path: method.path, method: .POST, body: body, lxm: method.nsid)
    }

    func query<Output: Decodable>(_ method: DeliveryMethod, _ query: [(String, String)]) async throws -> Output {
        try await send(Output.self, path: method.path, query: query, method: .GET, body: nil, lxm: method.nsid)
    }

    private func send<Output: Decodable>(
        _ type: Output.Type, path: String, query: [(String, String)] = [], method: HTTPMethod, body: Data?, lxm: String?
    ) async throws -> Output {
        let requestBody = body.map { ByteBuffer(data: $0) }
        let response = try await RateLimitBackoff.execute(httpClient, timeout: timeout, retries: rateLimitRetries) {
            var request = try makeRequest(path: path, query: query, method: method, lxm: lxm)
            if let requestBody {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(requestBody)
            }
            return request
        }
        let bytes = try await response.body.collect(upTo: 16 << 20)
        guard response.status == .ok else { throw decodeError(status: Int(response.status.code), body: bytes) }
        do {
            return try WireJSON.decoder().decode(Output.self, from: bytes)
        } catch {
            throw DeliveryProtocolError(status: Int(response.status.code), reason: "undecodable response: \(error)")
        }
    }

    private func makeRequest(path: String, query: [(String, String)], method: HTTPMethod, lxm: String?) throws -> HTTPClientRequest {
        try XRPCRequestBuilder(baseURL: baseURL, serviceDID: serviceDID, signer: signer)
            .request(path: path, query: query, method: method, lxm: lxm)
    }

    private func decodeError(status: Int, body: ByteBuffer) -> Error {
        if let decoded = try? JSONDecoder().decode(XRPCErrorBody.self, from: body) {
            return DeliveryServiceError(status: status, body: decoded)
        }
        return DeliveryProtocolError(status: status, reason: String(buffer: body).prefix(200).description)
    }
}
