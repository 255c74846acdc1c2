import AsyncHTTPClient
import NIOCore

extension HTTPClient.Configuration {
    /// How long Imprint's clients keep an idle pooled connection: less than the 30 s after
    /// which `imprint-server` closes an idle one (its `idleTimeout`).
    ///
    /// With the client keeping connections longer than the server (`HTTPClient.shared` keeps
    /// them 600 s), every connection idle past 30 s is closed by the server, and a request
    /// that picks it up in the moment the close is under way fails with
    /// `remoteConnectionClosed` although the server never saw it. Closing them first on the
    /// client's side leaves no such moment. A server configured with an idle timeout of 20 s
    /// or less brings the race back.
    public static let imprintPoolIdleTimeout: TimeAmount = .seconds(20)

    /// `HTTPClient.shared`'s configuration (`HTTPClient.Configuration.singletonConfiguration`)
    /// with idle pooled connections closed after `imprintPoolIdleTimeout`.
    public static var imprint: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.idleTimeout = imprintPoolIdleTimeout
        return configuration
    }
}

extension HTTPClient {
    /// The client Imprint's Delivery Service, zone and sync clients use unless they are given
    /// one: `HTTPClient.shared`'s event loops and settings, with idle connections closed
    /// before the server closes them (`HTTPClient.Configuration.imprint`). Lives as long as
    /// the process, like `.shared`.
    ///
    /// ```swift
    /// let delivery = DeliveryClient(baseURL: url, serviceDID: did, signer: signer) // uses it
    /// let same = DeliveryClient(baseURL: url, serviceDID: did, signer: signer, httpClient: .imprint)
    /// ```
    public static let imprint = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: .imprint)
}
