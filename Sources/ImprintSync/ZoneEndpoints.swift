import AsyncHTTPClient
import ImprintDelivery
import ImprintZones

/// Zone servers other than the account's own, by base URL: where members who registered
/// storage of their own (`registerStorage`) keep their inboxes. Each server's service DID
/// (the `aud` of its tokens) is read from its `_health` once and remembered.
public actor ZoneEndpoints {
    let signer: ServiceAuthSigner
    let httpClient: HTTPClient
    private var stores: [String: HTTPZoneStore] = [:]
    /// Each server's circuit (`EndpointCircuit`), shared by its store and its `_health` lookup.
    private var circuits: [String: EndpointCircuit] = [:]
    /// Requests to another member's server wait at most this long, so one slow inbox server
    /// holds up only its own copies.
    static let timeout: Duration = .seconds(20)

    /// The client for other members' servers: it does not retry a refused connection until
    /// the request's deadline (AsyncHTTPClient's default), so a server that is down costs a
    /// sender milliseconds, not the timeout. Otherwise `HTTPClient.imprint`'s settings (idle
    /// connections closed before the server closes them). Lives as long as the process.
    public static let failingFastClient: HTTPClient = {
        var configuration = HTTPClient.Configuration.imprint
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    public init(signer: ServiceAuthSigner, httpClient: HTTPClient = ZoneEndpoints.failingFastClient) {
        self.signer = signer
        self.httpClient = httpClient
    }

    /// The zone client of the server at `endpoint`. Throws `ZoneError` (code
    /// `transport`) when the server cannot be reached. A server that stopped answering (its
    /// requests time out) is not asked again for a while: its requests fail at once
    /// (`EndpointCircuit`), so a host that drops packets costs one timeout, not one per copy.
    public func store(at endpoint: String) async throws -> HTTPZoneStore {
        let endpoint = StorageRegistration.canonical(endpoint)
        if let store = stores[endpoint] { return store }
        let circuit = circuits[endpoint] ?? EndpointCircuit()
        circuits[endpoint] = circuit
        try circuit.check(endpoint)
        let serviceDID: String
        do {
            serviceDID = try await DeliveryClient(baseURL: endpoint, serviceDID: "", signer: signer, httpClient: httpClient).health().did
        } catch where error is DeliveryServiceError || error is DeliveryProtocolError {
            circuit.answered()  // it answered, just not with its health
            throw ZoneError(.transport, "zone server \(endpoint) did not answer its health check: \(error)")
        } catch {
            if EndpointCircuit.isTimeout(error) { circuit.failed() }
            throw ZoneError(.transport, "zone server \(endpoint) did not answer: \(error)")
        }
        circuit.answered()
        if let store = stores[endpoint] { return store }  // another caller finished first
        var store = HTTPZoneStore(baseURL: endpoint, serviceDID: serviceDID, signer: signer, httpClient: httpClient)
        store.circuit = circuit
        store.timeout = .seconds(Self.timeout.components.seconds)
        stores[endpoint] = store
        return store
    }
}
