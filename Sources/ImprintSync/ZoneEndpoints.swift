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
    /// Requests to another member's server wait at most this long, so one slow inbox server
    /// holds up only its own copies.
    static let timeout: Duration = .seconds(20)

    /// The client for other members' servers: it does not retry a refused connection until
    /// the request's deadline (AsyncHTTPClient's default), so a server that is down costs a
    /// sender milliseconds, not the timeout. Lives as long as the process, like `.shared`.
    public static let failingFastClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    public init(signer: ServiceAuthSigner, httpClient: HTTPClient = ZoneEndpoints.failingFastClient) {
        self.signer = signer
        self.httpClient = httpClient
    }

    /// The zone client of the server at `endpoint`. Throws `ZoneError` (code
    /// `transport`) when the server cannot be reached.
    public func store(at endpoint: String) async throws -> HTTPZoneStore {
        let endpoint = StorageRegistration.canonical(endpoint)
        if let store = stores[endpoint] { return store }
        let serviceDID: String
        do {
            serviceDID = try await DeliveryClient(baseURL: endpoint, serviceDID: "", signer: signer, httpClient: httpClient).health().did
        } catch {
            throw ZoneError(.transport, "zone server \(endpoint) did not answer: \(error)")
        }
        var store = HTTPZoneStore(baseURL: endpoint, serviceDID: serviceDID, signer: signer, httpClient: httpClient)
        store.timeout = .seconds(Self.timeout.components.seconds)
        stores[endpoint] = store
        return store
    }
}
